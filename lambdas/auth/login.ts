/*
 * Password login and its throttle: 5 attempts per address in a fixed 15-minute window,
 * one 401 for a wrong email and a wrong password alike.
 */
import { RateLimitedError, UnauthorizedError } from '../core/errors.ts';
import type { Clock } from '../core/ports/common.ts';
import { normalizeEmail } from './email-address.ts';
import { UNMATCHABLE_PASSWORD_HASH, verifyPassword } from './password.ts';
import type { AttemptLimit, AuditLog, AuthRepository, SessionMethod, User } from './ports.ts';
import type { IssuedSession } from './sessions.ts';

/**
 * Password attempts per email: 5 in a window of 15 minutes that starts with the first attempt.
 * The window is fixed, not sliding, and refused attempts are not counted, so an attacker hammering
 * one address keeps it throttled only while they keep trying, and never for longer than 15
 * minutes after they stop; the owner can still sign in with a magic link meanwhile.
 */
export const LOGIN_ATTEMPTS: AttemptLimit = { limit: 5, windowMs: 15 * 60_000 };

/** 429 RATE_LIMITED that says when to come back (the Retry-After header carries it too). */
export class TooManyAttemptsError extends RateLimitedError {
  constructor(retryAfterSeconds: number) {
    super(
      `Too many sign-in attempts for this email address; retry in ${Math.ceil(retryAfterSeconds / 60)} minute(s).`,
      retryAfterSeconds,
    );
  }
}

export function loginAttemptKey(email: string): string {
  return `LOGIN#${normalizeEmail(email)}`;
}

/**
 * Reserves one password attempt for the email or throws 429. Reserving before verifying (not
 * counting failures after) keeps concurrent guesses within the limit too.
 */
export async function reservePasswordAttempt(auth: AuthRepository, email: string, now: Date): Promise<void> {
  const decision = await auth.reserveAttempt(loginAttemptKey(email), LOGIN_ATTEMPTS, now);
  if (!decision.allowed) {
    throw new TooManyAttemptsError(
      Math.max(1, Math.ceil((decision.retryAt.getTime() - now.getTime()) / 1000)),
    );
  }
}

export interface LoginDeps {
  auth: AuthRepository;
  clock: Clock;
  startSession: (user: User, method: SessionMethod, teamId?: string) => Promise<IssuedSession>;
  audit: AuditLog;
}

export interface LoginInput {
  email: string;
  password: string;
  teamId?: string | undefined;
}

/**
 * Password login. A wrong email and a wrong password give the same 401 after the same work: an
 * unknown user (or one without a password) is verified against a hash no password matches.
 */
export function makeLogin({ auth, clock, startSession, audit }: LoginDeps) {
  return async ({ email, password, teamId }: LoginInput): Promise<IssuedSession> => {
    await reservePasswordAttempt(auth, email, clock.now());
    const user = await auth.findUserByEmail(email);
    const matches = await verifyPassword(password, user?.passwordHash ?? UNMATCHABLE_PASSWORD_HASH);
    if (!user?.passwordHash || !matches) {
      audit.info('login refused', {
        reason: 'wrong email or password',
        ...(user ? { userId: user.userId } : {}),
      });
      throw new UnauthorizedError('The email or password is incorrect.');
    }
    await auth.clearAttempts(loginAttemptKey(email));
    return startSession(user, 'password', teamId);
  };
}
