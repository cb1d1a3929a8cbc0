import { beforeEach, describe, expect, it } from 'vitest';
import { makeChangePassword } from '../../../lambdas/auth/account.ts';
import { isWellFormedApiToken } from '../../../lambdas/auth/api-token.ts';
import { makeBootstrapTeam } from '../../../lambdas/auth/bootstrap.ts';
import { verifyPassword } from '../../../lambdas/auth/password.ts';
import { hashSecret } from '../../../lambdas/auth/secret-token.ts';
import { ValidationError } from '../../../lambdas/core/errors.ts';
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
      { level: 'info', message: 'password changed', attributes: { userId: 'user-ada', endedSessions: 2 } },
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

  it('needs the current password, and a wrong one is 403 and counts against the login throttle', async () => {
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
    expect(await refusalOf(change(me, { currentPassword: OLD, newPassword: NEW }))).toMatchObject({
      status: 429,
    });
    expect(repo.sessions.get('session-phone')?.revokedAt).toBeUndefined();
  });

  it('clears the login throttle once the password changed', async () => {
    await repo.reserveAttempt('LOGIN#ada@example.test', { limit: 5, windowMs: 900_000 }, clock.now());
    await change(me, { currentPassword: OLD, newPassword: NEW });
    expect(repo.attempts.has('LOGIN#ada@example.test')).toBe(false);
  });

  it('sets a first password for a magic-link user without asking for one', async () => {
    const bob: Principal = { ...me, principalId: 'user-bob', userId: 'user-bob', sessionId: 'session-bob' };
    await change(bob, { newPassword: NEW });
    expect(await verifyPassword(NEW, repo.users.get('user-bob')?.passwordHash ?? '')).toBe(true);
    expect(audit.entries[0]?.attributes).toEqual({ userId: 'user-bob', endedSessions: 0 });
  });
});

describe('bootstrapping a team', () => {
  let bootstrap: ReturnType<typeof makeBootstrapTeam>;

  beforeEach(() => {
    bootstrap = makeBootstrapTeam({ auth: repo, clock, ids: sequentialIds() });
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
