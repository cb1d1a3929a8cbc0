/*
 * POST /me/password {currentPassword?, newPassword, revokeApiTokens?}: 204, ending the user's other
 * sessions and earlier sign-in links; 400 names the password rules a weak one breaks.
 */
import { makeChangePassword } from '../auth/account.ts';
import { PASSWORD_HASHING_MEMORY_MB } from '../auth/password.ts';
import { changePasswordBodySchema } from '../auth/schemas.ts';
import { operationHandler } from '../http/operation.ts';
import { auditLog } from '../wiring/auth-services.ts';
import { systemClock } from '../wiring/clock.ts';
import { authRepositoryFromEnv } from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';

export const changePassword = defineOperation({
  name: 'change-password',
  method: 'POST',
  path: '/me/password',
  summary:
    'Set or change your password: ends your other sessions and earlier sign-in links; revokeApiTokens also revokes your API tokens.',
  access: { auth: 'readWrite', events: 'readWrite' },
  memoryMb: PASSWORD_HASHING_MEMORY_MB,
  body: {
    schema: changePasswordBodySchema,
    required: true,
    example: {
      currentPassword: 'correct horse battery staple',
      newPassword: 'a longer passphrase of mine',
      revokeApiTokens: true,
    },
  },
  response: { status: 204 },
  errors: [429],
});

export const handler = /* @__PURE__ */ operationHandler(changePassword, () => {
  const change = makeChangePassword({ auth: authRepositoryFromEnv(), clock: systemClock, audit: auditLog });
  return async ({ principal, body }) => {
    await change(principal, body);
    return {};
  };
});
