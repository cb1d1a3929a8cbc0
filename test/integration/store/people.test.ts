import { BatchGetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { nanoid } from 'nanoid';
import { beforeAll, describe, expect, it } from 'vitest';
import { makeBootstrapTeam } from '../../../lambdas/auth/bootstrap.ts';
import { noUsageKeys } from '../../../lambdas/auth/usage-keys.ts';
import { newEvent } from '../../../lambdas/core/events.ts';
import { makePeopleDirectory } from '../../../lambdas/store/auth/people.ts';
import { nanoidGenerator, systemClock } from '../../../lambdas/wiring/clock.ts';
import { makeAuthRepository } from '../../../lambdas/wiring/repositories.ts';
import type { TableNames } from '../../../local/dynamodb.ts';
import { setUpApiEnvironment } from '../api/harness.ts';

/*
 * The people directory on DynamoDB Local: users' emails and API tokens' names by id, in a bounded
 * number of batch reads, a token named only to its own team, and what is shown once a record is gone.
 */

let db: DynamoDBDocumentClient;
let names: TableNames;

beforeAll(async () => {
  ({ db, names } = await setUpApiEnvironment());
});

/** A client that counts the BatchGetItem requests it sends. */
function counting() {
  const sent: string[] = [];
  const counted = {
    send: (command: { constructor: { name: string } }) => {
      sent.push(command.constructor.name);
      return db.send(command as BatchGetCommand);
    },
  } as unknown as DynamoDBDocumentClient;
  return { counted, batchGets: () => sent.filter((name) => name === BatchGetCommand.name).length };
}

async function team(tokenName = 'nightly evaluation job') {
  const auth = makeAuthRepository(db, names.Auth, names.Events);
  const email = `${nanoid(8).toLowerCase()}@example.test`;
  const created = await makeBootstrapTeam({
    auth,
    clock: systemClock,
    ids: nanoidGenerator,
    usageKeys: noUsageKeys,
  })({
    teamName: `team ${nanoid(5)}`,
    email,
    userName: 'reviewer',
    role: 'admin',
    tokenName,
  });
  return { ...created, email, auth };
}

describe('the people directory', () => {
  it("names users by email and the team's API tokens by name, revoked ones too", async () => {
    const acme = await team();
    await acme.auth.revokeApiToken(
      { tokenHash: (await acme.auth.getApiToken(acme.tokenId))?.tokenHash ?? '', tokenId: acme.tokenId },
      new Date().toISOString(),
      newEvent(
        'api_token.revoked',
        { teamId: acme.teamId, actor: { userId: acme.userId, credential: 'session' } },
        { at: new Date().toISOString(), key: acme.tokenId },
      ),
    );
    const directory = makePeopleDirectory(db, names.Auth);

    const found = await directory.displayNames(acme.teamId, {
      userIds: [acme.userId],
      tokenIds: [acme.tokenId],
    });

    expect(found.users.get(acme.userId)).toBe(acme.email);
    expect(found.tokens.get(acme.tokenId)).toBe('nightly evaluation job');
  });

  it("leaves out ids it cannot find and another team's tokens", async () => {
    const [acme, globex] = await Promise.all([team(), team('globex deploy bot')]);
    const directory = makePeopleDirectory(db, names.Auth);

    const found = await directory.displayNames(acme.teamId, {
      userIds: ['no-such-user'],
      tokenIds: [globex.tokenId, 'no-such-token'],
    });

    expect([...found.users.keys()]).toEqual([]);
    expect([...found.tokens.keys()]).toEqual([]);
  });

  it('reads 150 users and a token in 4 batch requests, and nothing again while warm', async () => {
    const acme = await team();
    const others = await Promise.all(Array.from({ length: 149 }, () => team()));
    const { counted, batchGets } = counting();
    const directory = makePeopleDirectory(counted, names.Auth);
    const userIds = [acme.userId, ...others.map((other) => other.userId)];

    const first = await directory.displayNames(acme.teamId, { userIds, tokenIds: [acme.tokenId] });
    const reads = batchGets();
    const again = await directory.displayNames(acme.teamId, { userIds, tokenIds: [acme.tokenId] });

    expect(first.users.size).toBe(150);
    // Users: 100 + 50 keys; the token: its id pointer, then the token item.
    expect(reads).toBe(4);
    expect(batchGets()).toBe(4);
    expect(again).toEqual(first);
  });
});
