import { beforeEach, describe, expect, it, vi } from 'vitest';
import { hashSecret, isWellFormedSecret } from '../../../lambdas/auth/secret-token.ts';
import { verifySessionToken } from '../../../lambdas/auth/session-token.ts';
import {
  type IssuedSession,
  makeEndSession,
  makeRefreshSession,
  makeStartSession,
  REFRESH_REUSE_INTERVAL_MS,
} from '../../../lambdas/auth/sessions.ts';
import {
  FakeAuthRepository,
  FakeClock,
  at as isoAt,
  RecordingAudit,
  refusalOf,
  SIGNING_KEY,
  seedMember,
  sequentialIds,
  signingKey,
} from './fakes.ts';

// Half a second past the second: access-token expiries are whole seconds.
const START = '2026-11-22T12:00:00.500Z';
const at = (ms: number) => isoAt(ms, START);
const MINUTE = 60_000;
const DAY = 24 * 3600_000;
const INVALID_REFRESH = 'The refresh token is invalid, used, expired or revoked.';
const NOT_A_MEMBER = 'The session no longer belongs to a member of its team.';

/** The one 401 every refused refresh answers, whatever the reason: it tells an attacker nothing. */
const expectInvalidRefresh = async (promise: Promise<unknown>) =>
  expect(await refusalOf(promise)).toMatchObject({ status: 401, message: INVALID_REFRESH });

let repo: FakeAuthRepository;
let clock: FakeClock;
let audit: RecordingAudit;
let deps: Parameters<typeof makeStartSession>[0];
let start: ReturnType<typeof makeStartSession>;
let refresh: ReturnType<typeof makeRefreshSession>;

beforeEach(() => {
  repo = new FakeAuthRepository();
  clock = new FakeClock(START);
  audit = new RecordingAudit();
  deps = { auth: repo, clock, ids: sequentialIds('session'), signingKey, audit };
  start = makeStartSession(deps);
  refresh = makeRefreshSession(deps);
});

describe('starting a session', () => {
  it('hands out an access token, a refresh token and the session’s ends, and stores only hashes', async () => {
    const ada = await seedMember(repo, { role: 'member' });
    const issued = await start(ada, 'password');

    expect(issued).toEqual({
      sessionId: 'session-1',
      userId: 'user-ada',
      teamId: 'team-a',
      role: 'member',
      accessToken: expect.stringMatching(/^pss_/),
      accessTokenExpiresAt: '2026-11-22T12:15:00.000Z',
      refreshToken: expect.any(String),
      refreshTokenExpiresAt: at(7 * DAY),
      expiresAt: at(30 * DAY),
    });
    expect(isWellFormedSecret('psr_', issued.refreshToken)).toBe(true);
    expect(verifySessionToken(issued.accessToken, SIGNING_KEY, clock.now())).toEqual({
      sid: 'session-1',
      uid: 'user-ada',
      iat: Math.floor(Date.parse(at(0)) / 1000),
      exp: Math.floor(Date.parse(at(15 * MINUTE)) / 1000),
    });
    expect(repo.sessions.get('session-1')).toEqual({
      sessionId: 'session-1',
      userId: 'user-ada',
      teamId: 'team-a',
      method: 'password',
      createdAt: at(0),
      expiresAt: at(30 * DAY),
    });
    expect([...repo.refreshTokens.values()]).toEqual([
      {
        tokenHash: hashSecret(issued.refreshToken),
        sessionId: 'session-1',
        createdAt: at(0),
        expiresAt: at(7 * DAY),
      },
    ]);
    expect(audit.entries).toEqual([
      {
        level: 'info',
        message: 'session started',
        attributes: { userId: 'user-ada', sessionId: 'session-1', method: 'password', teamId: 'team-a' },
      },
    ]);
  });

  it('acts for the user’s oldest team unless another is asked for', async () => {
    await seedMember(repo, { teamId: 'team-a', role: 'viewer', joinedAt: '2026-03-01T00:00:00.000Z' });
    const ada = await seedMember(repo, {
      teamId: 'team-b',
      role: 'admin',
      joinedAt: '2026-01-01T00:00:00.000Z',
    });
    expect(await start(ada, 'magic-link')).toMatchObject({ teamId: 'team-b', role: 'admin' });
    expect(await start(ada, 'magic-link', 'team-a')).toMatchObject({ teamId: 'team-a', role: 'viewer' });
    expect(repo.sessions.get('session-2')).toMatchObject({ teamId: 'team-a', method: 'magic-link' });
  });

  it('breaks a tie between teams joined at the same moment by team id', async () => {
    await seedMember(repo, { teamId: 'team-b', role: 'viewer' });
    const ada = await seedMember(repo, { teamId: 'team-a', role: 'member' });
    vi.spyOn(repo, 'listTeamsOfUser').mockImplementation(async (userId) =>
      (await FakeAuthRepository.prototype.listTeamsOfUser.call(repo, userId)).reverse(),
    );
    expect(await start(ada, 'password')).toMatchObject({ teamId: 'team-a', role: 'member' });
  });

  it('is refused (403) for a team the user is not in, and for a user in no team', async () => {
    const ada = await seedMember(repo);
    expect(await refusalOf(start(ada, 'password', 'team-z'))).toMatchObject({
      status: 403,
      message: 'The user is not a member of that team.',
    });
    repo.memberships.clear();
    expect(await refusalOf(start(ada, 'password'))).toMatchObject({
      status: 403,
      message: 'The user belongs to no team yet.',
    });
    expect(repo.sessions.size).toBe(0);
  });
});

describe('refreshing a session', () => {
  let ada: Awaited<ReturnType<typeof seedMember>>;
  let first: IssuedSession;

  beforeEach(async () => {
    await seedMember(repo, { teamId: 'team-b', role: 'viewer', joinedAt: '2026-02-01T00:00:00.000Z' });
    ada = await seedMember(repo, { teamId: 'team-a', role: 'member' });
    first = await start(ada, 'password');
    audit.entries.length = 0;
  });

  it('rotates the refresh token: a new pair, the session’s end unchanged', async () => {
    clock.advance(5 * MINUTE);
    const next = await refresh(first.refreshToken);
    expect(next).toEqual({
      sessionId: first.sessionId,
      userId: 'user-ada',
      teamId: 'team-a',
      role: 'member',
      accessToken: expect.stringMatching(/^pss_/),
      accessTokenExpiresAt: '2026-11-22T12:20:00.000Z',
      refreshToken: expect.any(String),
      refreshTokenExpiresAt: at(5 * MINUTE + 7 * DAY),
      expiresAt: first.expiresAt,
    });
    expect(next.refreshToken).not.toBe(first.refreshToken);
    expect(isWellFormedSecret('psr_', next.refreshToken)).toBe(true);
    expect(verifySessionToken(next.accessToken, SIGNING_KEY, clock.now())).toMatchObject({
      sid: first.sessionId,
      uid: 'user-ada',
      iat: Math.floor(Date.parse(at(5 * MINUTE)) / 1000),
    });
    expect(repo.refreshTokens.get(hashSecret(first.refreshToken))?.usedAt).toBe(at(5 * MINUTE));
    expect(repo.refreshTokens.get(hashSecret(next.refreshToken))).toEqual({
      tokenHash: hashSecret(next.refreshToken),
      sessionId: first.sessionId,
      createdAt: at(5 * MINUTE),
      expiresAt: at(5 * MINUTE + 7 * DAY),
    });
    expect(repo.sessions.get(first.sessionId)?.lastRefreshedAt).toBe(at(5 * MINUTE));
    // The successor works in its turn.
    clock.advance(MINUTE);
    expect((await refresh(next.refreshToken)).sessionId).toBe(first.sessionId);
  });

  it('never lets a refresh token or an access token outlive the session', async () => {
    const record = repo.sessions.get(first.sessionId);
    if (record) record.expiresAt = at(10 * MINUTE);
    clock.advance(6 * MINUTE);
    const last = await refresh(first.refreshToken);
    expect(last.expiresAt).toBe(at(10 * MINUTE));
    expect(last.refreshTokenExpiresAt).toBe(at(10 * MINUTE));
    expect(repo.refreshTokens.get(hashSecret(last.refreshToken))?.expiresAt).toBe(at(10 * MINUTE));
    // Whole seconds, rounded down: the token must not outlive the session by half a second.
    expect(last.accessTokenExpiresAt).toBe('2026-11-22T12:10:00.000Z');
    expect(verifySessionToken(last.accessToken, SIGNING_KEY, clock.now())?.exp).toBe(
      Math.floor(Date.parse(at(10 * MINUTE)) / 1000),
    );
  });

  it('is refused (401) for a malformed, unknown or expired refresh token', async () => {
    const lookups = vi.spyOn(repo, 'findRefreshToken');
    await expectInvalidRefresh(refresh(`${first.refreshToken.slice(0, -1)}-`));
    // A made-up or mistyped token costs no store read.
    expect(lookups).not.toHaveBeenCalled();
    await expectInvalidRefresh(refresh('psr_not-a-token'));
    await expectInvalidRefresh(refresh(first.refreshToken.replace(/^psr_/, 'psa_')));
    repo.refreshTokens.clear();
    await expectInvalidRefresh(refresh(first.refreshToken));
  });

  it('accepts a refresh token until the last millisecond of its lifetime, not at its end', async () => {
    const second = await start(ada, 'password');
    clock.advance(7 * DAY - 1);
    await expect(refresh(first.refreshToken)).resolves.toMatchObject({ sessionId: first.sessionId });
    clock.advance(1);
    await expectInvalidRefresh(refresh(second.refreshToken));
    // An expired token is not a reuse: the session lives on.
    expect(repo.sessions.get(second.sessionId)?.revokedAt).toBeUndefined();
  });

  it('is refused (401) once the session was ended, has reached its end, or is gone', async () => {
    await repo.revokeSession(first.sessionId, at(0), 'logout');
    await expectInvalidRefresh(refresh(first.refreshToken));

    // Two sessions that end in a minute, with refresh tokens that would last 7 days.
    const second = await start(ada, 'password');
    const third = await start(ada, 'password');
    for (const { sessionId } of [second, third]) {
      const record = repo.sessions.get(sessionId);
      if (record) record.expiresAt = at(MINUTE);
    }
    clock.advance(MINUTE - 1);
    await expect(refresh(second.refreshToken)).resolves.toMatchObject({ sessionId: second.sessionId });
    clock.advance(1);
    await expectInvalidRefresh(refresh(third.refreshToken));

    const fourth = await start(ada, 'password');
    repo.sessions.delete(fourth.sessionId);
    await expectInvalidRefresh(refresh(fourth.refreshToken));
  });

  it('switches the session to another of the user’s teams, with that team’s role', async () => {
    const switched = await refresh(first.refreshToken, 'team-b');
    expect(switched).toMatchObject({ teamId: 'team-b', role: 'viewer' });
    expect(repo.sessions.get(first.sessionId)?.teamId).toBe('team-b');
    // The next refresh stays in the team switched to.
    expect(await refresh(switched.refreshToken)).toMatchObject({ teamId: 'team-b', role: 'viewer' });
  });

  it('refuses (403) to switch to a team the user is not in, and leaves the session as it was', async () => {
    expect(await refusalOf(refresh(first.refreshToken, 'team-z'))).toMatchObject({
      status: 403,
      message: 'The user is not a member of that team.',
    });
    expect(repo.sessions.get(first.sessionId)).toMatchObject({ teamId: 'team-a' });
    expect(repo.sessions.get(first.sessionId)?.revokedAt).toBeUndefined();
    await expect(refresh(first.refreshToken)).resolves.toMatchObject({ teamId: 'team-a' });
  });

  it('is refused (401) when the user was removed from the session’s team', async () => {
    repo.memberships.delete('user-ada#team-a');
    expect(await refusalOf(refresh(first.refreshToken))).toMatchObject({
      status: 401,
      message: NOT_A_MEMBER,
    });
  });

  describe('a refresh token presented again', () => {
    it('within 10 s answers exactly the pair the rotation handed out (two tabs)', async () => {
      const rotated = await refresh(first.refreshToken, 'team-b');
      clock.advance(REFRESH_REUSE_INTERVAL_MS);
      expect(await refresh(first.refreshToken)).toEqual(rotated);
      expect(repo.sessions.get(first.sessionId)?.revokedAt).toBeUndefined();
      expect(audit.messages()).toEqual(['info: refresh repeated within the reuse interval']);
      expect(audit.entries[0]?.attributes).toEqual({ sessionId: first.sessionId });
    });

    it('after 10 s ends the whole family: every token of the session is refused', async () => {
      const rotated = await refresh(first.refreshToken);
      clock.advance(REFRESH_REUSE_INTERVAL_MS + 1);
      await expectInvalidRefresh(refresh(first.refreshToken));
      expect(repo.sessions.get(first.sessionId)).toMatchObject({
        revokedAt: at(REFRESH_REUSE_INTERVAL_MS + 1),
        revokedReason: 'refresh-token-reuse',
      });
      expect(audit.entries).toEqual([
        {
          level: 'warn',
          message: 'refresh token reused: session revoked',
          attributes: { sessionId: first.sessionId, userId: 'user-ada' },
        },
      ]);
      await expectInvalidRefresh(refresh(rotated.refreshToken));
    });

    it('within 10 s ends the family when its successor is not the one the rotation stored', async () => {
      const rotated = await refresh(first.refreshToken);
      repo.refreshTokens.delete(hashSecret(rotated.refreshToken));
      await expectInvalidRefresh(refresh(first.refreshToken));
      expect(repo.sessions.get(first.sessionId)?.revokedReason).toBe('refresh-token-reuse');

      const other = await start(ada, 'password');
      const again = await refresh(other.refreshToken);
      const successor = repo.refreshTokens.get(hashSecret(again.refreshToken));
      if (successor) successor.sessionId = 'another-session';
      await expectInvalidRefresh(refresh(other.refreshToken));
      expect(repo.sessions.get(other.sessionId)?.revokedReason).toBe('refresh-token-reuse');
    });

    it('within 10 s ends the family when the session ends while the repeat is answered', async () => {
      await refresh(first.refreshToken);
      const live = await repo.getSession(first.sessionId);
      await repo.revokeSession(first.sessionId, at(1), 'logout');
      vi.spyOn(repo, 'getSession').mockResolvedValueOnce(live);
      await expectInvalidRefresh(refresh(first.refreshToken));

      const other = await start(ada, 'password');
      await refresh(other.refreshToken);
      const alive = await repo.getSession(other.sessionId);
      repo.sessions.delete(other.sessionId);
      vi.spyOn(repo, 'getSession').mockResolvedValueOnce(alive);
      await expectInvalidRefresh(refresh(other.refreshToken));
      expect(audit.messages()).toContain('warn: refresh token reused: session revoked');
    });

    it('within 10 s is refused (401) when the user has left the team meanwhile', async () => {
      await refresh(first.refreshToken);
      repo.memberships.delete('user-ada#team-a');
      expect(await refusalOf(refresh(first.refreshToken))).toMatchObject({
        status: 401,
        message: NOT_A_MEMBER,
      });
    });

    it('after its own expiry still counts as reuse and ends the family', async () => {
      await refresh(first.refreshToken);
      clock.advance(7 * DAY + 1);
      await expectInvalidRefresh(refresh(first.refreshToken));
      expect(repo.sessions.get(first.sessionId)?.revokedReason).toBe('refresh-token-reuse');
    });

    it('concurrently with its rotation gets the same answer', async () => {
      const [one, two] = await Promise.all([refresh(first.refreshToken), refresh(first.refreshToken)]);
      expect(two).toEqual(one);
      expect(repo.sessions.get(first.sessionId)?.revokedAt).toBeUndefined();
    });

    it('ends the family when the store says it was used but no use is recorded', async () => {
      vi.spyOn(repo, 'rotateRefreshToken').mockResolvedValueOnce('reused');
      await expectInvalidRefresh(refresh(first.refreshToken));
      expect(repo.sessions.get(first.sessionId)?.revokedReason).toBe('refresh-token-reuse');
    });

    it('ends the family when the token is gone by the time the store says it was used', async () => {
      vi.spyOn(repo, 'rotateRefreshToken').mockImplementationOnce(async ({ usedHash }) => {
        repo.refreshTokens.delete(usedHash);
        return 'reused';
      });
      await expectInvalidRefresh(refresh(first.refreshToken));
      expect(repo.sessions.get(first.sessionId)?.revokedReason).toBe('refresh-token-reuse');
    });
  });

  it('is refused (401) when the session is ended during the rotation, and stores no successor', async () => {
    const live = await repo.getSession(first.sessionId);
    await repo.revokeSession(first.sessionId, at(0), 'password-changed');
    vi.spyOn(repo, 'getSession').mockResolvedValueOnce(live);
    const before = repo.refreshTokens.size;
    await expectInvalidRefresh(refresh(first.refreshToken));
    expect(repo.refreshTokens.size).toBe(before);
    // Not a reuse: the reason stays the password change.
    expect(repo.sessions.get(first.sessionId)?.revokedReason).toBe('password-changed');
  });
});

describe('ending a session (logout)', () => {
  it('revokes the session of the access token, even an expired one', async () => {
    const ada = await seedMember(repo);
    const issued = await start(ada, 'password');
    audit.entries.length = 0;
    clock.advance(DAY);
    await makeEndSession(deps)(issued.accessToken);
    expect(repo.sessions.get(issued.sessionId)).toMatchObject({
      revokedAt: at(DAY),
      revokedReason: 'logout',
    });
    expect(audit.entries).toEqual([
      {
        level: 'info',
        message: 'session ended',
        attributes: { sessionId: issued.sessionId, userId: 'user-ada' },
      },
    ]);
    // Its refresh token no longer works.
    await expectInvalidRefresh(refresh(issued.refreshToken));
  });

  it('ignores a missing or forged token, revealing nothing', async () => {
    const ada = await seedMember(repo);
    const issued = await start(ada, 'password');
    const end = makeEndSession(deps);
    await end(undefined);
    await end('');
    await end(`${issued.accessToken.slice(0, -2)}AA`);
    expect(repo.sessions.get(issued.sessionId)?.revokedAt).toBeUndefined();
    expect(audit.messages()).toEqual(['info: session started']);
  });
});
