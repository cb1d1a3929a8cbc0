import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { makeEnsureTeamUsageKey } from '../../../lambdas/auth/usage-keys.ts';
import { NotFoundError } from '../../../lambdas/core/errors.ts';
import { makeTeamUsageKeyStore } from '../../../lambdas/store/auth/usage-keys.ts';
import { makeAuthRepository } from '../../../lambdas/wiring/repositories.ts';
import type { TableNames } from '../../../local/dynamodb.ts';
import { createCaller, setUpApiEnvironment } from '../api/harness.ts';

/*
 * Teams' usage keys on DynamoDB Local: kept once on the team item (the first one wins), listed for
 * the backfill until kept, and never part of what a reader of the team sees.
 */

let db: DynamoDBDocumentClient;
let names: TableNames;

beforeAll(async () => {
  ({ db, names } = await setUpApiEnvironment());
});

describe('the team usage key store', () => {
  it('keeps the first key of a team and answers it to every later attempt', async () => {
    const { principal } = await createCaller(db, names);
    const store = makeTeamUsageKeyStore({ db, tableName: names.Auth });
    const first = { keyId: 'key-1', value: 'value-1' };

    expect(await store.getTeamUsageKey(principal.teamId)).toBeNull();
    expect(await store.keepTeamUsageKey(principal.teamId, first, 'plan-1')).toEqual(first);
    expect(
      await store.keepTeamUsageKey(principal.teamId, { keyId: 'key-2', value: 'value-2' }, 'plan-1'),
    ).toEqual(first);
    expect(await store.getTeamUsageKey(principal.teamId)).toEqual({ ...first, planId: 'plan-1' });
  });

  it('refuses to keep a key for a team that does not exist, and writes no item', async () => {
    const store = makeTeamUsageKeyStore({ db, tableName: names.Auth });

    await expect(
      store.keepTeamUsageKey('team-gone', { keyId: 'k', value: 'v' }, 'plan-1'),
    ).rejects.toBeInstanceOf(NotFoundError);
    expect(await store.getTeamUsageKey('team-gone')).toBeNull();
  });

  it('lists the teams without a key, page by page, until each has one', async () => {
    const callers = await Promise.all([1, 2, 3].map(() => createCaller(db, names)));
    const store = makeTeamUsageKeyStore({ db, tableName: names.Auth });
    const listAll = async () => {
      const teamIds: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await store.listTeamsWithoutUsageKey('plan-1', cursor);
        teamIds.push(...page.teamIds);
        cursor = page.cursor;
      } while (cursor !== undefined);
      return teamIds;
    };
    const mine = callers.map((caller) => caller.principal.teamId);

    expect(await listAll()).toEqual(expect.arrayContaining(mine));
    const ensure = makeEnsureTeamUsageKey({
      store,
      registry: {
        planId: 'plan-1',
        findKey: async () => null,
        createKey: async (teamId) => ({ keyId: `id-${teamId}`, value: `value-${teamId}` }),
        addToPlan: async () => {},
      },
    });
    for (const teamId of mine) await ensure(teamId);
    expect((await listAll()).filter((teamId) => mine.includes(teamId))).toEqual([]);
  });

  it('never shows the key to a reader of the team', async () => {
    const { principal } = await createCaller(db, names);
    await makeTeamUsageKeyStore({ db, tableName: names.Auth }).keepTeamUsageKey(
      principal.teamId,
      {
        keyId: 'key-shown',
        value: 'value-shown',
      },
      'plan-1',
    );

    const teams = await makeAuthRepository(db, names.Auth, names.Events).listTeamsOfUser(principal.userId);

    expect(teams).toHaveLength(1);
    expect(JSON.stringify(teams)).not.toMatch(/key-shown|value-shown|usageKey/);
  });
});
