/*
 * Lambda handler of DELETE /api-tokens/{id}: revokes one of the caller's API tokens.
 * Composes the use case with the DynamoDB store.
 */
import { makeRevokeApiToken } from '../auth/api-tokens.ts';
import { idSchema } from '../core/schemas.ts';
import { systemClock } from '../platform/clock.ts';
import { httpHandler, noContent, pathParam, principalOf } from '../platform/http.ts';
import { authRepositoryFromEnv } from '../platform/repositories.ts';

const revokeApiToken = makeRevokeApiToken({ auth: authRepositoryFromEnv(), clock: systemClock });

/** DELETE /api-tokens/{id}: 204; the token stops working within the revocation bound. */
export const handler = httpHandler(async (event) => {
  await revokeApiToken(principalOf(event), pathParam(event, 'id', idSchema));
  return noContent();
});
