/*
 * The caller's own account: changing the password from a session, which ends the user's other
 * sessions and pending sign-in links, optionally revokes their API tokens, and throttles wrong
 * current passwords per user.
 */

import { ForbiddenError, RateLimitedError, UnauthorizedError } from '../core/errors.ts';
import type { Clock } from '../core/ports/common.ts';
import type { Principal } from '../core/principal.ts';
import { revokedEvent } from './api-tokens.ts';
import { loginAttemptKey } from './login.ts';
import { assertPasswordAcceptable, hashPassword, verifyPassword } from './password.ts';
import type { AttemptLimit, AuditLog, AuthRepository } from './ports.ts';

export interface ChangePasswordInput {
  currentPassword?: string | undefined;
  newPassword: string;
  /** Also revoke every API token of the user (all teams); they keep working otherwise. */
  revokeApiTokens?: boolean | undefined;
}

/**
 * Current-password checks per user: 5 in a 15-minute window that starts with the first, as for
 * sign-in, but counted apart from it: a stranger's failed logins for the address must not keep
 * its owner from changing the password, and only someone holding the user's session can count here.
 */
export const PASSWORD_CHANGE_ATTEMPTS: AttemptLimit = { limit: 5, windowMs: 15 * 60_000 };

export function passwordChangeAttemptKey(userId: string): string {
  return `PASSWORD_CHANGE#${userId}`;
}

/**
 * Checks the current password, after reserving one attempt of the user's (reserving before
 * verifying keeps concurrent guesses within the limit): 429 once the window's attempts are used.
 */
async function assertCurrentPassword(
  auth: AuthRepository,
  { userId, passwordHash }: { userId: string; passwordHash: string },
  currentPassword: string | undefined,
  now: Date,
): Promise<void> {
  if (currentPassword === undefined) {
    throw new ForbiddenError('currentPassword is required to change an existing password.');
  }
  const decision = await auth.reserveAttempt(passwordChangeAttemptKey(userId), PASSWORD_CHANGE_ATTEMPTS, now);
  if (!decision.allowed) {
    const seconds = Math.max(1, Math.ceil((decision.retryAt.getTime() - now.getTime()) / 1000));
    throw new RateLimitedError(
      `Too many wrong current passwords; retry in ${Math.ceil(seconds / 60)} minute(s).`,
      seconds,
    );
  }
  if (!(await verifyPassword(currentPassword, passwordHash))) {
    throw new ForbiddenError('The current password is incorrect.');
  }
}

/** Revokes every live API token of the user, in all their teams; says how many. */
async function revokeAllApiTokens(auth: AuthRepository, userId: string, at: string): Promise<number> {
  const tokens = await auth.listLiveApiTokensOfUser(userId);
  // Only a session changes a password: the revocations' actor is the user's session.
  const actor = { userId, credential: 'session' } as const;
  await Promise.all(tokens.map((token) => auth.revokeApiToken(token, at, revokedEvent(token, at, actor))));
  return tokens.length;
}

/**
 * Sets the caller's password (session only). The current password is required when there is one
 * (a magic-link session included: whoever reads the mailbox must not take over a password
 * account; a user who forgot it keeps signing in with magic links); wrong guesses are throttled
 * per user. Every other session of the user is ended, since one of them may be the reason for the
 * change, and so is every sign-in link sent before (the store bumps the user's credentials
 * version, which a link must match). API tokens are team credentials and keep working, unless
 * `revokeApiTokens` asks to revoke all of the user's.
 */
export function makeChangePassword({
  auth,
  clock,
  audit,
}: {
  auth: AuthRepository;
  clock: Clock;
  audit: AuditLog;
}) {
  return async (principal: Principal, input: ChangePasswordInput): Promise<void> => {
    if (principal.method !== 'session' || !principal.sessionId) {
      throw new ForbiddenError('Change the password from a browser session, not with an API token.');
    }
    const [user, session] = await Promise.all([
      auth.getUser(principal.userId),
      auth.getSession(principal.sessionId),
    ]);
    if (!user || !session) throw new UnauthorizedError();
    const now = clock.now();
    assertPasswordAcceptable(input.newPassword, user.email, 'newPassword');
    if (user.passwordHash) {
      const { userId, passwordHash } = user;
      await assertCurrentPassword(auth, { userId, passwordHash }, input.currentPassword, now);
    }
    await auth.setPasswordHash(user.userId, await hashPassword(input.newPassword));
    await Promise.all([
      auth.clearAttempts(passwordChangeAttemptKey(user.userId)),
      auth.clearAttempts(loginAttemptKey(user.email)),
    ]);
    const others = (await auth.listActiveSessionIdsOfUser(user.userId)).filter(
      (id) => id !== session.sessionId,
    );
    await Promise.all(others.map((id) => auth.revokeSession(id, now.toISOString(), 'password-changed')));
    const revokedApiTokens = input.revokeApiTokens
      ? await revokeAllApiTokens(auth, user.userId, now.toISOString())
      : 0;
    audit.info('password changed', { userId: user.userId, endedSessions: others.length, revokedApiTokens });
  };
}
