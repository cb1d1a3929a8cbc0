/*
 * Lambda handler of POST /me/password: the caller sets a new password from a browser
 * session.
 */
import { makeChangePassword } from '../auth/account.ts';
import { changePasswordBodySchema } from '../auth/schemas.ts';
import { auditLog } from '../platform/auth-services.ts';
import { systemClock } from '../platform/clock.ts';
import { httpHandler, noContent, parseBody, principalOf } from '../platform/http.ts';
import { authRepositoryFromEnv } from '../platform/repositories.ts';

const changePassword = makeChangePassword({
  auth: authRepositoryFromEnv(),
  clock: systemClock,
  audit: auditLog,
});

/** POST /me/password {currentPassword?, newPassword}: 204; 400 names the password rules a weak one breaks. */
export const handler = httpHandler(async (event) => {
  await changePassword(principalOf(event), parseBody(event, changePasswordBodySchema));
  return noContent();
});
