import { beforeEach, describe, expect, it } from 'vitest';
import { hashApiToken, isWellFormedApiToken } from '../../../lambdas/auth/api-token.ts';
import {
  makeCreateApiToken,
  makeListApiTokens,
  makeRevokeApiToken,
} from '../../../lambdas/auth/api-tokens.ts';
import { NotFoundError, ValidationError } from '../../../lambdas/core/errors.ts';
import type { Principal } from '../../../lambdas/core/principal.ts';
import { at, FakeAuthRepository, FakeClock, refusalOf, seedMember, sequentialIds } from './fakes.ts';

let repo: FakeAuthRepository;
let clock: FakeClock;
let create: ReturnType<typeof makeCreateApiToken>;
let list: ReturnType<typeof makeListApiTokens>;
let revoke: ReturnType<typeof makeRevokeApiToken>;

const session: Principal = {
  principalId: 'user-ada',
  userId: 'user-ada',
  teamId: 'team-a',
  role: 'viewer',
  method: 'session',
  sessionId: 'session-1',
};
const viaToken: Principal = { ...session, method: 'api-token', tokenId: 'token-0', sessionId: undefined };

beforeEach(async () => {
  repo = new FakeAuthRepository();
  clock = new FakeClock();
  const deps = { auth: repo, clock, ids: sequentialIds('token') };
  create = makeCreateApiToken(deps);
  list = makeListApiTokens(deps);
  revoke = makeRevokeApiToken(deps);
  await seedMember(repo, { teamId: 'team-a', role: 'viewer' });
  await seedMember(repo, { teamId: 'team-b', role: 'admin' });
});

describe('creating an API token', () => {
  it('returns its secret once, and a view that never shows the secret or its hash', async () => {
    const created = await create(session, { name: 'ci', teamId: 'team-a', expiresAt: at(1) });
    expect(created).toEqual({
      id: 'token-1',
      name: 'ci',
      teamId: 'team-a',
      hint: `psa_…${created.token.slice(-4)}`,
      createdAt: at(0),
      lastUsedAt: null,
      expiresAt: at(1),
      revokedAt: null,
      token: created.token,
    });
    expect(isWellFormedApiToken(created.token)).toBe(true);
    expect(repo.apiTokens.get(hashApiToken(created.token))).toEqual({
      tokenId: 'token-1',
      tokenHash: hashApiToken(created.token),
      userId: 'user-ada',
      teamId: 'team-a',
      name: 'ci',
      hint: created.hint,
      createdAt: at(0),
      expiresAt: at(1),
      revokedAt: null,
      lastUsedAt: null,
    });
    // Any role may create one: a viewer's token is a read-only token.
    expect((await create(session, { name: 'forever', teamId: 'team-a' })).expiresAt).toBeNull();
  });

  it('is 403 with an API token: a leaked token must not mint successors', async () => {
    expect(await refusalOf(create(viaToken, { name: 'ci', teamId: 'team-a' }))).toMatchObject({
      status: 403,
      message: 'API tokens are created from a browser session, not with another API token.',
    });
    expect(repo.apiTokens.size).toBe(0);
  });

  it('is 400 unless the expiry lies in the future', async () => {
    const refused = await refusalOf(create(session, { name: 'ci', teamId: 'team-a', expiresAt: at(0) }));
    expect(refused.error).toBeInstanceOf(ValidationError);
    expect(refused.message).toBe('expiresAt must be in the future.');
    expect((refused.error as ValidationError).details).toEqual([
      { path: 'expiresAt', message: 'must be in the future' },
    ]);
    expect(repo.apiTokens.size).toBe(0);
  });

  it('is 403 for another team than the session acts for, even one of the user’s', async () => {
    expect(await refusalOf(create(session, { name: 'ci', teamId: 'team-b' }))).toMatchObject({
      status: 403,
      message: 'You can create tokens only for the team this session acts for; switch team first.',
    });
  });

  it('is 403 once the user no longer belongs to the session’s team', async () => {
    repo.memberships.delete('user-ada#team-a');
    expect(await refusalOf(create(session, { name: 'ci', teamId: 'team-a' }))).toMatchObject({
      status: 403,
      message: 'You can create tokens only for teams you belong to.',
    });
    expect(repo.apiTokens.size).toBe(0);
  });
});

describe('listing API tokens', () => {
  it('shows the caller’s own tokens of the credential’s team, newest first, revoked ones included', async () => {
    const first = await create(session, { name: 'first', teamId: 'team-a' });
    clock.advance(1_000);
    await create(session, { name: 'second', teamId: 'team-a' });
    await revoke(session, first.id);
    await create({ ...session, teamId: 'team-b' }, { name: 'other team', teamId: 'team-b' });
    await seedMember(repo, { userId: 'user-bob', email: 'bob@example.test', teamId: 'team-a' });
    await create(
      { ...session, userId: 'user-bob', principalId: 'user-bob' },
      { name: 'bob', teamId: 'team-a' },
    );

    const page = await list(viaToken, { limit: 10 });
    expect(page.items.map((token) => token.name)).toEqual(['second', 'first']);
    expect(page.items[1]).toEqual({
      id: first.id,
      name: 'first',
      teamId: 'team-a',
      hint: first.hint,
      createdAt: at(0),
      lastUsedAt: null,
      expiresAt: null,
      revokedAt: at(1_000),
    });
    expect(page.items[0]).not.toHaveProperty('token');
    expect(page.items[0]).not.toHaveProperty('tokenHash');
    expect(page.nextCursor).toBeNull();
  });

  it('shows when a token was last used, and null for one never recorded', async () => {
    const created = await create(session, { name: 'ci', teamId: 'team-a' });
    const record = repo.apiTokens.get(hashApiToken(created.token));
    if (record) delete record.lastUsedAt;
    expect((await list(session, { limit: 10 })).items[0]?.lastUsedAt).toBeNull();
    await repo.touchApiToken(hashApiToken(created.token), at(5), at(0));
    expect((await list(session, { limit: 10 })).items[0]?.lastUsedAt).toBe(at(5));
  });

  it('pages with the store’s cursor', async () => {
    for (const name of ['a', 'b', 'c']) {
      await create(session, { name, teamId: 'team-a' });
      clock.advance(1);
    }
    const first = await list(session, { limit: 2 });
    expect(first.items.map((token) => token.name)).toEqual(['c', 'b']);
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = await list(session, { limit: 2, cursor: first.nextCursor ?? undefined });
    expect(second).toEqual({ items: [expect.objectContaining({ name: 'a' })], nextCursor: null });
  });
});

describe('revoking an API token', () => {
  it('sets revokedAt; revoking again keeps the first time', async () => {
    const created = await create(session, { name: 'ci', teamId: 'team-a' });
    clock.advance(1_000);
    await revoke(viaToken, created.id);
    clock.advance(1_000);
    await revoke(session, created.id);
    expect(repo.apiTokens.get(hashApiToken(created.token))?.revokedAt).toBe(at(1_000));
  });

  it('is 404 for an unknown id, another user’s token, or the user’s token of another team', async () => {
    const mine = await create({ ...session, teamId: 'team-b' }, { name: 'b', teamId: 'team-b' });
    await seedMember(repo, { userId: 'user-bob', email: 'bob@example.test', teamId: 'team-a' });
    const bobs = await create(
      { ...session, userId: 'user-bob', principalId: 'user-bob' },
      { name: 'bob', teamId: 'team-a' },
    );
    for (const id of ['token-404', mine.id, bobs.id]) {
      const refused = await refusalOf(revoke(session, id));
      expect(refused.error).toBeInstanceOf(NotFoundError);
      expect(refused.message).toBe(`API token ${id} does not exist.`);
    }
    expect([...repo.apiTokens.values()].map((token) => token.revokedAt)).toEqual([null, null]);
  });
});
