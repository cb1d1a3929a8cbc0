/* POST /api-tokens {name, teamId, expiresAt?}: 201 with the token and its secret, shown this once. */
import { makeCreateApiToken } from '../auth/api-tokens.ts';
import { createApiTokenBodySchema } from '../auth/schemas.ts';
import { operationHandler } from '../http/operation.ts';
import { nanoidGenerator, systemClock } from '../wiring/clock.ts';
import { authRepositoryFromEnv } from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';
import { createdApiTokenAnswer } from './shapes.ts';

export const createApiToken = defineOperation({
  name: 'create-api-token',
  method: 'POST',
  path: '/api-tokens',
  summary:
    'Create an API token for one of your teams (with a session); the secret is shown once. At most 100 tokens a ' +
    'person (across their teams) and 500 a team that are not revoked (an expired one counts until revoked).',
  access: { auth: 'readWrite', events: 'readWrite' },
  body: {
    schema: createApiTokenBodySchema,
    required: true,
    example: { name: 'ci', teamId: 'V1StGXR8_Z5jdHi6B-myT', expiresAt: '2027-06-30T00:00:00.000Z' },
  },
  response: { status: 201, schema: createdApiTokenAnswer },
  errors: [],
});

export const handler = /* @__PURE__ */ operationHandler(createApiToken, () => {
  const create = makeCreateApiToken({
    auth: authRepositoryFromEnv(),
    clock: systemClock,
    ids: nanoidGenerator,
  });
  return async ({ principal, body }) => ({ body: await create(principal, body) });
});
