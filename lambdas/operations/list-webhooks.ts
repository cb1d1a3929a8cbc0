/* GET /webhooks: the team's webhooks, never their secrets. */
import { operationHandler } from '../http/operation.ts';
import { makeListWebhooks } from '../webhooks/webhooks.ts';
import { webhookRepositoryFromEnv } from '../wiring/webhooks.ts';
import { defineOperation } from './declaration.ts';
import { pageOf } from './parameters.ts';
import { webhookAnswer } from './shapes.ts';

export const listWebhooks = defineOperation({
  name: 'list-webhooks',
  method: 'GET',
  path: '/webhooks',
  summary: "The team's webhooks (never their secrets); all of them, in one page.",
  access: { data: 'read' },
  response: { status: 200, schema: pageOf(webhookAnswer) },
  errors: [],
});

export const handler = /* @__PURE__ */ operationHandler(listWebhooks, () => {
  const list = makeListWebhooks({ webhooks: webhookRepositoryFromEnv() });
  return async ({ principal }) => ({ body: await list(principal) });
});
