/* DELETE /api-tokens/{id}: 204; the token stops working within the revocation bound. */
import { makeRevokeApiToken } from '../auth/api-tokens.ts';
import { idSchema } from '../core/schemas/common.ts';
import { operationHandler } from '../http/operation.ts';
import { systemClock } from '../wiring/clock.ts';
import { authRepositoryFromEnv } from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';

export const revokeApiToken = defineOperation({
  name: 'revoke-api-token',
  method: 'DELETE',
  path: '/api-tokens/{id}',
  summary: 'Revoke an API token.',
  access: { auth: 'readWrite', events: 'readWrite' },
  params: { id: idSchema },
  response: { status: 204 },
  errors: [404],
});

export const handler = /* @__PURE__ */ operationHandler(revokeApiToken, () => {
  const revoke = makeRevokeApiToken({ auth: authRepositoryFromEnv(), clock: systemClock });
  return async ({ principal, params }) => {
    await revoke(principal, params.id);
    return {};
  };
});
