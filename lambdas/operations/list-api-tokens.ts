/* GET /api-tokens?limit&cursor: the caller's tokens, newest first, without secrets or hashes. */
import { makeListApiTokens } from '../auth/api-tokens.ts';
import { withSealedCursors } from '../http/cursors.ts';
import { operationHandler } from '../http/operation.ts';
import { cursorSealFromEnv } from '../wiring/cursors.ts';
import { authRepositoryFromEnv } from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';
import { pageQuery } from './page-query.ts';
import { pageOf } from './parameters.ts';
import { apiTokenAnswer } from './shapes.ts';

export const listApiTokens = defineOperation({
  name: 'list-api-tokens',
  method: 'GET',
  path: '/api-tokens',
  summary: 'Your API tokens (never their secrets).',
  access: { auth: 'read', sessionSecret: true },
  query: pageQuery,
  response: { status: 200, schema: pageOf(apiTokenAnswer) },
  errors: [],
});

export const handler = /* @__PURE__ */ operationHandler(listApiTokens, () => {
  const list = makeListApiTokens({ auth: authRepositoryFromEnv() });
  return withSealedCursors(listApiTokens, cursorSealFromEnv(), async ({ principal, query }) => ({
    body: await list(principal, query),
  }));
});
