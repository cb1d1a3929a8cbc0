/*
 * Lambda handler of GET /api-tokens: the caller's API tokens of the credential's team,
 * without secrets or hashes.
 */
import { makeListApiTokens } from '../auth/api-tokens.ts';
import { httpHandler, json, pageLimit, principalOf, queryParam } from '../platform/http.ts';
import { authRepositoryFromEnv } from '../platform/repositories.ts';

const listApiTokens = makeListApiTokens({ auth: authRepositoryFromEnv() });

/** GET /api-tokens: the caller's tokens, newest first, without secrets or hashes. */
export const handler = httpHandler(async (event) => {
  const page = { limit: pageLimit(event), cursor: queryParam(event, 'cursor') };
  return json(200, await listApiTokens(principalOf(event), page));
});
