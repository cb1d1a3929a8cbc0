/*
 * Lambda handler of POST /api-tokens: creates an API token for the session's team and
 * answers its secret, once.
 */
import { makeCreateApiToken } from '../auth/api-tokens.ts';
import { createApiTokenBodySchema } from '../auth/schemas.ts';
import { nanoidGenerator, systemClock } from '../platform/clock.ts';
import { httpHandler, json, parseBody, principalOf } from '../platform/http.ts';
import { authRepositoryFromEnv } from '../platform/repositories.ts';

const createApiToken = makeCreateApiToken({
  auth: authRepositoryFromEnv(),
  clock: systemClock,
  ids: nanoidGenerator,
});

/** POST /api-tokens {name, teamId, expiresAt?}: 201 with the token and its secret, shown this once. */
export const handler = httpHandler(async (event) => {
  const created = await createApiToken(principalOf(event), parseBody(event, createApiTokenBodySchema));
  return json(201, created);
});
