import { beforeEach, describe, expect, it } from 'vitest';
import { makeChangePassword } from '../../../lambdas/auth/account.ts';
import { isWellFormedApiToken } from '../../../lambdas/auth/api-token.ts';
import { makeBootstrapTeam } from '../../../lambdas/auth/bootstrap.ts';
import { verifyPassword } from '../../../lambdas/auth/password.ts';
import { hashSecret } from '../../../lambdas/auth/secret-token.ts';
import { type RateLimitedError, ValidationError } from '../../../lambdas/core/errors.ts';
import type { Principal } from '../../../lambdas/core/principal.ts';
import {
  at,
  cheapPasswordHash,
  FakeAuthRepository,
  FakeClock,
  RecordingAudit,
  refusalOf,
  seedMember,
  sequentialIds,
} from './fakes.ts';

const OLD = 'an old passphrase of mine';
const NEW = 'a brand new passphrase';

let repo: FakeAuthRepository;
let clock: FakeClock;
let audit: RecordingAudit;

beforeEach(() => {
  repo = new FakeAuthRepository();
  clock = new FakeClock();
  audit = new RecordingAudit();
});

describe('changing the password', () => {
  let change: ReturnType<typeof makeChangePassword>;
  const me: Principal = {
    principalId: 'user-ada',
    userId: 'user-ada',
    teamId: 'team-a',
    role: 'viewer',
    method: 'session',
    sessionId: 'session-mine',
  };

  async function session(sessionId: string, userId = 'user-ada') {
    await repo.createSession(
      { sessionId, userId, teamId: 'team-a', method: 'password', createdAt: at(0), expiresAt: at(3_600_000) },
      { tokenHash: hashSecret(sessionId), sessionId, createdAt: at(0), expiresAt: at(3_600_000) },
    );
  }

  beforeEach(async () => {
    change = makeChangePassword({ auth: repo, clock, audit });
    await seedMember(repo, { passwordHash: cheapPasswordHash(OLD) });
    await seedMember(repo, { userId: 'user-bob', email: 'bob@example.test' });
    for (const id of ['session-mine', 'session-phone', 'session-laptop']) await session(id);
    await session('session-bob', 'user-bob');
  });

  it('sets the new password and ends every other session of the user', async () => {
    await change(me, { currentPassword: OLD, newPassword: NEW });
    const stored = repo.users.get('user-ada')?.passwordHash ?? '';
    expect(await verifyPassword(NEW, stored)).toBe(true);
    expect(await verifyPassword(OLD, stored)).toBe(false);
    expect(repo.sessions.get('session-mine')?.revokedAt).toBeUndefined();
    for (const id of ['session-phone', 'session-laptop'])
      expect(repo.sessions.get(id)).toMatchObject({ revokedAt: at(0), revokedReason: 'password-changed' });
    expect(repo.sessions.get('session-bob')?.revokedAt).toBeUndefined();
    expect(audit.entries).toEqual([
      {
        level: 'info',
        message: 'password changed',
        attributes: { userId: 'user-ada', endedSessions: 2, revokedApiTokens: 0 },
      },
    ]);
  });

  it('is 403 with an API token, or a session principal without its session', async () => {
    for (const principal of [
      { ...me, method: 'api-token' as const, sessionId: undefined, tokenId: 'token-1' },
      // The method decides, even were a session id passed along with an API token.
      { ...me, method: 'api-token' as const, tokenId: 'token-1' },
      { ...me, sessionId: undefined },
    ]) {
      expect(await refusalOf(change(principal, { currentPassword: OLD, newPassword: NEW }))).toMatchObject({
        status: 403,
        message: 'Change the password from a browser session, not with an API token.',
      });
    }
  });

  it('is 401 when the user or the session is gone', async () => {
    const gone = { ...me, sessionId: 'session-gone' };
    expect(await refusalOf(change(gone, { currentPassword: OLD, newPassword: NEW }))).toMatchObject({
      status: 401,
    });
    repo.users.delete('user-ada');
    expect(await refusalOf(change(me, { currentPassword: OLD, newPassword: NEW }))).toMatchObject({
      status: 401,
    });
  });

  it('is 400 for a weak new password, naming the newPassword field', async () => {
    const refused = await refusalOf(change(me, { currentPassword: OLD, newPassword: 'Password1234' }));
    expect(refused.error).toBeInstanceOf(ValidationError);
    expect((refused.error as ValidationError).details).toEqual([
      { path: 'newPassword', message: 'is too common' },
    ]);
    expect(await verifyPassword(OLD, repo.users.get('user-ada')?.passwordHash ?? '')).toBe(true);
  });

  it('needs the current password, and after 5 wrong ones is 429 until 15 minutes after the first', async () => {
    expect(await refusalOf(change(me, { newPassword: NEW }))).toMatchObject({
      status: 403,
      message: 'currentPassword is required to change an existing password.',
    });
    for (let i = 0; i < 5; i++) {
      expect(
        await refusalOf(change(me, { currentPassword: 'a wrong guess', newPassword: NEW })),
      ).toMatchObject({
        status: 403,
        message: 'The current password is incorrect.',
      });
    }
    clock.advance(60_000);
    const throttled = await refusalOf(change(me, { currentPassword: OLD, newPassword: NEW }));
    expect(throttled).toMatchObject({
      status: 429,
      message: 'Too many wrong current passwords; retry in 14 minute(s).',
    });
    expect((throttled.error as RateLimitedError).retryAfterSeconds).toBe(14 * 60);
    expect(repo.sessions.get('session-phone')?.revokedAt).toBeUndefined();
    expect(await verifyPassword(OLD, repo.users.get('user-ada')?.passwordHash ?? '')).toBe(true);

    clock.advance(14 * 60_000);
    await change(me, { currentPassword: OLD, newPassword: NEW });
    expect(await verifyPassword(NEW, repo.users.get('user-ada')?.passwordHash ?? '')).toBe(true);
  });

  it('says to retry in at least a second when the window ends within one', async () => {
    for (let i = 0; i < 5; i++)
      await refusalOf(change(me, { currentPassword: 'a wrong guess', newPassword: NEW }));
    clock.advance(15 * 60_000 - 400);
    const throttled = await refusalOf(change(me, { currentPassword: OLD, newPassword: NEW }));
    expect((throttled.error as RateLimitedError).retryAfterSeconds).toBe(1);
  });

  it('is not blocked by a stranger failing to sign in as the user, nor counts against sign-in', async () => {
    for (let i = 0; i < 5; i++)
      await repo.reserveAttempt('LOGIN#ada@example.test', { limit: 5, windowMs: 900_000 }, clock.now());
    await change(me, { currentPassword: OLD, newPassword: NEW });
    expect(await verifyPassword(NEW, repo.users.get('user-ada')?.passwordHash ?? '')).toBe(true);

    await refusalOf(change(me, { currentPassword: 'a wrong guess', newPassword: 'yet another passphrase' }));
    expect(repo.attempts.has('LOGIN#ada@example.test')).toBe(false);
    expect(repo.attempts.get('PASSWORD_CHANGE#user-ada')?.attempts).toBe(1);
  });

  it("counts wrong current passwords per user: another user's do not throttle this one", async () => {
    await seedMember(repo, {
      userId: 'user-eve',
      email: 'eve@example.test',
      passwordHash: cheapPasswordHash(OLD),
    });
    await session('session-eve', 'user-eve');
    const eve: Principal = { ...me, principalId: 'user-eve', userId: 'user-eve', sessionId: 'session-eve' };
    for (let i = 0; i < 5; i++)
      await refusalOf(change(eve, { currentPassword: 'a wrong guess', newPassword: NEW }));
    expect((await refusalOf(change(eve, { currentPassword: OLD, newPassword: NEW }))).status).toBe(429);

    await change(me, { currentPassword: OLD, newPassword: NEW });
    expect(await verifyPassword(NEW, repo.users.get('user-ada')?.passwordHash ?? '')).toBe(true);
  });

  it('clears both throttles once the password changed', async () => {
    await repo.reserveAttempt('LOGIN#ada@example.test', { limit: 5, windowMs: 900_000 }, clock.now());
    await refusalOf(change(me, { currentPassword: 'a wrong guess', newPassword: NEW }));
    await change(me, { currentPassword: OLD, newPassword: NEW });
    expect(repo.attempts.has('LOGIN#ada@example.test')).toBe(false);
    expect(repo.attempts.has('PASSWORD_CHANGE#user-ada')).toBe(false);
  });

  it('raises the credentials version, so that sign-in links sent before no longer work', async () => {
    await change(me, { currentPassword: OLD, newPassword: NEW });
    expect(repo.users.get('user-ada')?.credentialsVersion).toBe(1);
  });

  it('keeps API tokens working unless asked, then revokes every live token of the user, in all teams', async () => {
    const token = (tokenId: string, userId: string, teamId: string, revokedAt: string | null = null) =>
      repo.createApiToken({
        tokenId,
        tokenHash: `hash-${tokenId}`,
        userId,
        teamId,
        name: tokenId,
        hint: 'psa_…abcd',
        createdAt: at(0),
        expiresAt: null,
        revokedAt,
      });
    await token('ada-a', 'user-ada', 'team-a');
    await token('ada-b', 'user-ada', 'team-b');
    await token('ada-old', 'user-ada', 'team-a', at(-1000));
    await token('bob-a', 'user-bob', 'team-a');

    await change(me, { currentPassword: OLD, newPassword: NEW });
    expect([...repo.apiTokens.values()].filter((t) => t.revokedAt === null)).toHaveLength(3);

    clock.advance(1000);
    await change(me, { currentPassword: NEW, newPassword: OLD, revokeApiTokens: true });
    const revokedAt = (tokenId: string) => repo.apiTokens.get(`hash-${tokenId}`)?.revokedAt;
    expect(revokedAt('ada-a')).toBe(at(1000));
    expect(revokedAt('ada-b')).toBe(at(1000));
    expect(revokedAt('ada-old')).toBe(at(-1000));
    expect(revokedAt('bob-a')).toBeNull();
    expect(audit.entries.at(-1)?.attributes).toEqual({
      userId: 'user-ada',
      endedSessions: 0,
      revokedApiTokens: 2,
    });
  });

  it('revokes no token when the change is refused', async () => {
    await repo.createApiToken({
      tokenId: 'ada-a',
      tokenHash: 'hash-ada-a',
      userId: 'user-ada',
      teamId: 'team-a',
      name: 'ci',
      hint: 'psa_…abcd',
      createdAt: at(0),
      expiresAt: null,
      revokedAt: null,
    });
    await refusalOf(
      change(me, { currentPassword: 'a wrong guess', newPassword: NEW, revokeApiTokens: true }),
    );
    expect(repo.apiTokens.get('hash-ada-a')?.revokedAt).toBeNull();
  });

  it('sets a first password for a magic-link user without asking for one', async () => {
    const bob: Principal = { ...me, principalId: 'user-bob', userId: 'user-bob', sessionId: 'session-bob' };
    await change(bob, { newPassword: NEW });
    expect(await verifyPassword(NEW, repo.users.get('user-bob')?.passwordHash ?? '')).toBe(true);
    expect(audit.entries[0]?.attributes).toEqual({
      userId: 'user-bob',
      endedSessions: 0,
      revokedApiTokens: 0,
    });
    expect(repo.attempts.size).toBe(0);
  });
});

describe('bootstrapping a team', () => {
  let bootstrap: ReturnType<typeof makeBootstrapTeam>;
  /** The teams given a usage key, with the users that existed at that moment. */
  let keyed: Array<{ teamId: string; users: number }>;

  beforeEach(() => {
    keyed = [];
    bootstrap = makeBootstrapTeam({
      auth: repo,
      clock,
      ids: sequentialIds(),
      usageKeys: async (teamId) => {
        keyed.push({ teamId, users: repo.users.size });
        return { keyId: `key-of-${teamId}`, value: `value-of-${teamId}` };
      },
    });
  });

  it('gives the new team its usage key of the evaluation plan before its first member exists', async () => {
    const usersBefore = repo.users.size;
    const result = await bootstrap({ teamName: 'Acme', email: 'ada@example.test', userName: 'Ada' });
    expect(keyed).toEqual([{ teamId: result.teamId, users: usersBefore }]);
  });

  it('creates no member when the usage key cannot be made, so running it again works', async () => {
    const failing = makeBootstrapTeam({
      auth: repo,
      clock,
      ids: sequentialIds('x'),
      usageKeys: async () => {
        throw new Error('API Gateway refused');
      },
    });
    const usersBefore = repo.users.size;

    await expect(failing({ teamName: 'Acme', email: 'ada@example.test', userName: 'Ada' })).rejects.toThrow(
      'API Gateway refused',
    );
    expect(repo.users.size).toBe(usersBefore);
    await expect(
      bootstrap({ teamName: 'Acme', email: 'ada@example.test', userName: 'Ada' }),
    ).resolves.toMatchObject({ apiToken: expect.any(String) });
  });

  it('creates the team, its first admin and an API token for that team', async () => {
    const result = await bootstrap({ teamName: 'Acme', email: 'Ada@Example.test', userName: 'Ada' });
    expect(result).toEqual({ teamId: 'id-1', userId: 'id-2', tokenId: 'id-3', apiToken: expect.any(String) });
    expect(isWellFormedApiToken(result.apiToken)).toBe(true);
    expect(repo.teams.get('id-1')).toEqual({ teamId: 'id-1', name: 'Acme', createdAt: at(0) });
    expect(repo.users.get('id-2')).toEqual({
      userId: 'id-2',
      email: 'ada@example.test',
      name: 'Ada',
      createdAt: at(0),
    });
    expect(await repo.getMembership('id-2', 'id-1')).toEqual({
      userId: 'id-2',
      teamId: 'id-1',
      role: 'admin',
      createdAt: at(0),
    });
    expect(await repo.getApiToken('id-3')).toEqual({
      tokenId: 'id-3',
      tokenHash: hashSecret(result.apiToken),
      userId: 'id-2',
      teamId: 'id-1',
      name: 'bootstrap',
      hint: `psa_…${result.apiToken.slice(-4)}`,
      createdAt: at(0),
      expiresAt: null,
      revokedAt: null,
    });
  });

  it('takes a role, a token name and a password hash made earlier', async () => {
    const hash = cheapPasswordHash(OLD);
    const result = await bootstrap({
      teamName: 'Acme',
      email: 'ada@example.test',
      userName: 'Ada',
      passwordHash: hash,
      role: 'viewer',
      tokenName: 'seed',
    });
    expect(repo.users.get(result.userId)?.passwordHash).toBe(hash);
    expect((await repo.getMembership(result.userId, result.teamId))?.role).toBe('viewer');
    expect((await repo.getApiToken(result.tokenId))?.name).toBe('seed');
  });

  it('hashes a password given in clear, after checking it against the password rules', async () => {
    const result = await bootstrap({
      teamName: 'Acme',
      email: 'ada@example.test',
      userName: 'Ada',
      password: NEW,
    });
    expect(await verifyPassword(NEW, repo.users.get(result.userId)?.passwordHash ?? '')).toBe(true);

    const refused = await refusalOf(
      bootstrap({
        teamName: 'Beta',
        email: 'grace@example.test',
        userName: 'Grace',
        password: 'grace-hopper-1906',
      }),
    );
    expect(refused.status).toBe(400);
    expect(repo.teams.size).toBe(1);
  });
});
