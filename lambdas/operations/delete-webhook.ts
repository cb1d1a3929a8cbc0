/* DELETE /webhooks/{id}: 204; nothing more is sent to it, not even events already queued. */
import { idSchema } from '../core/schemas/common.ts';
import { operationHandler } from '../http/operation.ts';
import { makeDeleteWebhook } from '../webhooks/webhooks.ts';
import { systemClock } from '../wiring/clock.ts';
import { webhookRepositoryFromEnv } from '../wiring/webhooks.ts';
import { defineOperation } from './declaration.ts';

export const deleteWebhook = defineOperation({
  name: 'delete-webhook',
  method: 'DELETE',
  path: '/webhooks/{id}',
  summary: 'Delete a webhook; it receives nothing more, not even events already queued.',
  access: { data: 'readWrite', events: 'readWrite' },
  params: { id: idSchema },
  response: { status: 204 },
  errors: [404],
});

export const handler = /* @__PURE__ */ operationHandler(deleteWebhook, () => {
  const remove = makeDeleteWebhook({ webhooks: webhookRepositoryFromEnv(), clock: systemClock });
  return async ({ principal, params }) => {
    await remove(principal, params.id);
    return {};
  };
});
