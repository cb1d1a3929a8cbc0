/*
 * How many API tokens one person and one team may hold (auth/api-token.ts API_TOKEN_LIMITS), through
 * the create and revoke handlers on DynamoDB Local: each token is its own per-credential rate
 * bucket, so minting tokens must not multiply what one person or team may send.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { nanoid } from 'nanoid';
import { beforeAll, describe, expect, it } from 'vitest';
import { API_TOKEN_LIMITS } from '../../../lambdas/auth/api-token.ts';
import type { Principal } from '../../../lambdas/core/principal.ts';
import { makeAuthRepository } from '../../../lambdas/wiring/repositories.ts';
import type { TableNames } from '../../../local/dynamodb.ts';
import {
  apiEvent,
  createCaller,
  type HttpLambda,
  invoke,
  loadHandlers,
  setUpApiEnvironment,
} from '../api/harness.ts';

let db: DynamoDBDocumentClient;
let names: TableNames;
let http: Record<string, HttpLambda>;

beforeAll(async () => {
  ({ db, names } = await setUpApiEnvironment());
  http = await loadHandlers(['create-api-token', 'revoke-api-token']);
});

/** A person of `teamId` (a new team when absent), signed in with a session (only a session mints tokens). */
async function person(teamId?: string): Promise<Principal> {
  const caller = await createCaller(db, names, 'member');
  const principal: Principal = {
    ...caller.principal,
    method: 'session',
    sessionId: nanoid(),
    tokenId: undefined,
  };
  if (teamId === undefined) return principal;
  await makeAuthRepository(db, names.Auth, names.Events).putMembership({
    userId: principal.userId,
    teamId,
    role: 'member',
    createdAt: new Date().toISOString(),
  });
  return { ...principal, teamId };
}

const create = (principal: Principal, name = 'ci') =>
  invoke(
    http['create-api-token'] as HttpLambda,
    apiEvent({
      method: 'POST',
      resource: '/api-tokens',
      body: { name, teamId: principal.teamId },
      principal,
    }),
  );
const revoke = (principal: Principal, id: string) =>
  invoke(
    http['revoke-api-token'] as HttpLambda,
    apiEvent({ method: 'DELETE', resource: '/api-tokens/{id}', pathParameters: { id }, principal }),
  );

async function mint(principal: Principal, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let index = 0; index < count; index++) {
    const created = await create(principal, `token ${index}`);
    expect(created.status).toBe(201);
    ids.push(created.body.id);
  }
  return ids;
}

describe('API tokens a person may hold', () => {
  it('refuses the one past the limit with a 400 naming it, and takes one again once one is revoked', async () => {
    const me = await person();
    // The bootstrap token counts as well.
    const ids = await mint(me, API_TOKEN_LIMITS.perPerson - 1);

    const refused = await create(me);
    const again = await create(me);
    await revoke(me, ids[0] as string);
    // Revoking twice frees one place, not two.
    await revoke(me, ids[0] as string);
    const freed = await create(me);
    const full = await create(me);

    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({
      error: 'VALIDATION_ERROR',
      message: expect.stringContaining(`at most ${API_TOKEN_LIMITS.perPerson} API tokens`),
    });
    expect(again.status).toBe(400);
    expect(freed.status).toBe(201);
    expect(full.status).toBe(400);
  }, 120_000);

  it('refuses every one of a burst past the limit at once: none slips past it', async () => {
    const me = await person();
    await mint(me, API_TOKEN_LIMITS.perPerson - 11);

    const burst = await Promise.all(Array.from({ length: 30 }, (_, index) => create(me, `burst ${index}`)));

    const statuses = burst.map((answer) => answer.status);
    // Ten places left; a transaction that lost a race to another may answer 409 (try again).
    expect(statuses.filter((status) => status === 201)).toHaveLength(10);
    expect(statuses.every((status) => [201, 400, 409].includes(status))).toBe(true);
  }, 120_000);
});

describe('API tokens a team may have', () => {
  it('refuses the one past the team limit, whoever asks, and names the team limit', async () => {
    const first = await person();
    const people = [first];
    for (let index = 1; index * API_TOKEN_LIMITS.perPerson < API_TOKEN_LIMITS.perTeam; index++)
      people.push(await person(first.teamId));
    // Each holds all but one of what a person may (the other is a bootstrap token of their own team).
    for (const someone of people) await mint(someone, API_TOKEN_LIMITS.perPerson - 1);
    const latecomer = await person(first.teamId);
    // The team's: the first person's bootstrap token and the ones minted.
    const left = API_TOKEN_LIMITS.perTeam - 1 - people.length * (API_TOKEN_LIMITS.perPerson - 1);
    await mint(latecomer, left);

    const refused = await create(latecomer);

    expect(refused.status).toBe(400);
    expect(refused.body.message).toContain(`A team has at most ${API_TOKEN_LIMITS.perTeam} API tokens`);
  }, 300_000);
});
