/*
 * The caller's own account: changing the password from a session, which ends the user's
 * other sessions and counts wrong current passwords against the login throttle.
 */
import { ForbiddenError, UnauthorizedError } from '../core/errors.ts';
import type { Clock } from '../core/ports.ts';
import type { Principal } from '../core/principal.ts';
import { loginAttemptKey, reservePasswordAttempt } from './login.ts';
import { assertPasswordAcceptable, hashPassword, verifyPassword } from './password.ts';
import type { AuditLog, AuthRepository } from './ports.ts';

export interface ChangePasswordInput {
  currentPassword?: string | undefined;
  newPassword: string;
}

/**
 * Sets the caller's password (session only). The current password is required when there is one
 * (a magic-link session included: whoever reads the mailbox must not take over a password
 * account; a user who forgot it keeps signing in with magic links); wrong guesses count against
 * the login throttle. Every other session of the user is ended, since one of them may be the
 * reason for the change.
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
      if (input.currentPassword === undefined) {
        throw new ForbiddenError('currentPassword is required to change an existing password.');
      }
      await reservePasswordAttempt(auth, user.email, now);
      if (!(await verifyPassword(input.currentPassword, user.passwordHash))) {
        throw new ForbiddenError('The current password is incorrect.');
      }
    }
    await auth.setPasswordHash(user.userId, await hashPassword(input.newPassword));
    await auth.clearAttempts(loginAttemptKey(user.email));
    const others = (await auth.listActiveSessionIdsOfUser(user.userId)).filter(
      (id) => id !== session.sessionId,
    );
    await Promise.all(others.map((id) => auth.revokeSession(id, now.toISOString(), 'password-changed')));
    audit.info('password changed', { userId: user.userId, endedSessions: others.length });
  };
}
