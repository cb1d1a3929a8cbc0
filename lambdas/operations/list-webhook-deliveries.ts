/* GET /webhooks/{id}/deliveries?limit&cursor: a webhook's delivery attempts, newest first (kept 30 days). */
import { idSchema } from '../core/schemas/common.ts';
import { withSealedCursors } from '../http/cursors.ts';
import { operationHandler } from '../http/operation.ts';
import { deliverySchema } from '../webhooks/ports.ts';
import { makeListDeliveries } from '../webhooks/webhooks.ts';
import { cursorSealFromEnv } from '../wiring/cursors.ts';
import { webhookRepositoryFromEnv } from '../wiring/webhooks.ts';
import { defineOperation } from './declaration.ts';
import { pageQuery } from './page-query.ts';
import { pageOf } from './parameters.ts';

export const listWebhookDeliveries = defineOperation({
  name: 'list-webhook-deliveries',
  method: 'GET',
  path: '/webhooks/{id}/deliveries',
  summary: "A webhook's delivery attempts, newest first; kept 30 days.",
  access: { data: 'read', sessionSecret: true },
  params: { id: idSchema },
  query: pageQuery,
  response: { status: 200, schema: pageOf(deliverySchema) },
  errors: [404],
});

export const handler = /* @__PURE__ */ operationHandler(listWebhookDeliveries, () => {
  const list = makeListDeliveries({ webhooks: webhookRepositoryFromEnv() });
  return withSealedCursors(
    listWebhookDeliveries,
    cursorSealFromEnv(),
    async ({ principal, params, query }) => ({
      body: await list(principal, params.id, { limit: query.limit, cursor: query.cursor }),
    }),
  );
});
