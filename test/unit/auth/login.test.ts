import { beforeEach, describe, expect, it, vi } from 'vitest';
import {
  LOGIN_ATTEMPTS,
  makeLogin,
  reservePasswordAttempt,
  TooManyAttemptsError,
} from '../../../lambdas/auth/login.ts';
import type { SessionMethod, User } from '../../../lambdas/auth/ports.ts';
import type { IssuedSession } from '../../../lambdas/auth/sessions.ts';
import { UnauthorizedError } from '../../../lambdas/core/errors.ts';
import {
  cheapPasswordHash,
  FakeAuthRepository,
  FakeClock,
  RecordingAudit,
  refusalOf,
  seedMember,
} from './fakes.ts';

const PASSWORD = 'correct horse battery staple';
const WRONG = 'The email or password is incorrect.';

let repo: FakeAuthRepository;
let clock: FakeClock;
let audit: RecordingAudit;
let started: Array<{ user: User; method: SessionMethod; teamId: string | undefined }>;
let login: ReturnType<typeof makeLogin>;
const errorOf = async (promise: Promise<unknown>) => (await refusalOf(promise)).error;

beforeEach(async () => {
  repo = new FakeAuthRepository();
  clock = new FakeClock();
  audit = new RecordingAudit();
  started = [];
  const startSession = async (user: User, method: SessionMethod, teamId?: string) => {
    started.push({ user, method, teamId });
    return { sessionId: `session-${started.length}` } as IssuedSession;
  };
  login = makeLogin({ auth: repo, clock, startSession, audit });
  await seedMember(repo, { passwordHash: cheapPasswordHash(PASSWORD) });
});

describe('password login', () => {
  it('starts a password session for the user, in the team asked for', async () => {
    const issued = await login({ email: 'ada@example.test', password: PASSWORD, teamId: 'team-a' });
    expect(issued.sessionId).toBe('session-1');
    expect(started).toEqual([
      { user: expect.objectContaining({ userId: 'user-ada' }), method: 'password', teamId: 'team-a' },
    ]);
  });

  it('answers the same 401 for a wrong password, an unknown email and a user without a password', async () => {
    await seedMember(repo, { userId: 'user-bob', email: 'bob@example.test' });
    for (const attempt of [
      { email: 'ada@example.test', password: 'not the password' },
      { email: 'nobody@example.test', password: PASSWORD },
      { email: 'bob@example.test', password: PASSWORD },
    ]) {
      const error = await errorOf(login(attempt));
      expect(error).toBeInstanceOf(UnauthorizedError);
      expect(error.message).toBe(WRONG);
    }
    expect(started).toEqual([]);
    expect(audit.entries).toEqual([
      {
        level: 'info',
        message: 'login refused',
        attributes: { reason: 'wrong email or password', userId: 'user-ada' },
      },
      { level: 'info', message: 'login refused', attributes: { reason: 'wrong email or password' } },
      {
        level: 'info',
        message: 'login refused',
        attributes: { reason: 'wrong email or password', userId: 'user-bob' },
      },
    ]);
  });

  it('allows 5 attempts per address in 15 minutes, whatever the case or padding of the address', async () => {
    for (const email of ['ada@example.test', 'ADA@example.test', ' ada@Example.TEST ', 'ada@example.test']) {
      await errorOf(login({ email, password: 'wrong' }));
    }
    await errorOf(login({ email: 'Ada@Example.Test', password: 'wrong' }));
    const throttled = await errorOf(login({ email: 'ada@example.test', password: PASSWORD }));
    expect(throttled).toBeInstanceOf(TooManyAttemptsError);
    expect(throttled).toMatchObject({
      statusCode: 429,
      code: 'RATE_LIMITED',
      retryAfterSeconds: 15 * 60,
      message: 'Too many sign-in attempts for this email address; retry in 15 minute(s).',
    });
    // Another address is not throttled.
    await expect(errorOf(login({ email: 'bob@example.test', password: 'wrong' }))).resolves.toBeInstanceOf(
      UnauthorizedError,
    );
  });

  it('says when to come back, rounding up, and lets the owner in when the window ends', async () => {
    for (let i = 0; i < LOGIN_ATTEMPTS.limit; i++)
      await errorOf(login({ email: 'ada@example.test', password: 'x' }));
    clock.advance(14 * 60_000 + 500);
    expect(await errorOf(login({ email: 'ada@example.test', password: PASSWORD }))).toMatchObject({
      retryAfterSeconds: 60,
      message: 'Too many sign-in attempts for this email address; retry in 1 minute(s).',
    });
    clock.advance(59_000);
    expect(await errorOf(login({ email: 'ada@example.test', password: PASSWORD }))).toMatchObject({
      retryAfterSeconds: 1,
    });
    clock.advance(500);
    await expect(login({ email: 'ada@example.test', password: PASSWORD })).resolves.toMatchObject({
      sessionId: 'session-1',
    });
  });

  it('starts the count afresh after a successful login', async () => {
    for (let i = 0; i < LOGIN_ATTEMPTS.limit - 1; i++)
      await errorOf(login({ email: 'ada@example.test', password: 'x' }));
    await login({ email: ' ADA@example.test', password: PASSWORD });
    for (let i = 0; i < LOGIN_ATTEMPTS.limit - 1; i++)
      await errorOf(login({ email: 'ada@example.test', password: 'x' }));
    await expect(login({ email: 'ada@example.test', password: PASSWORD })).resolves.toMatchObject({
      sessionId: 'session-2',
    });
  });
});

describe('reserving a password attempt', () => {
  it('asks to wait at least a second even when the store’s window ended a moment ago', async () => {
    const now = clock.now();
    vi.spyOn(repo, 'reserveAttempt').mockResolvedValueOnce({
      allowed: false,
      retryAt: new Date(now.getTime() - 5),
    });
    expect(await errorOf(reservePasswordAttempt(repo, 'ada@example.test', now))).toMatchObject({
      retryAfterSeconds: 1,
    });
  });

  it('counts under the normalised address, apart from magic-link requests', async () => {
    const reserve = vi.spyOn(repo, 'reserveAttempt');
    await reservePasswordAttempt(repo, ' Ada@Example.test', clock.now());
    expect(reserve).toHaveBeenCalledWith('LOGIN#ada@example.test', LOGIN_ATTEMPTS, clock.now());
  });
});
