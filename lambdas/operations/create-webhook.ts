/* POST /webhooks {url, eventTypes?, description?}: 201 with the webhook and its secret, shown this once. */
import { operationHandler } from '../http/operation.ts';
import { createWebhookBodySchema, makeCreateWebhook } from '../webhooks/webhooks.ts';
import { nanoidGenerator, systemClock } from '../wiring/clock.ts';
import {
  webhookRepositoryFromEnv,
  webhookSecretKeyFromEnv,
  webhookUrlCheckFromEnv,
} from '../wiring/webhooks.ts';
import { defineOperation } from './declaration.ts';
import { createdWebhookAnswer } from './shapes.ts';

export const createWebhook = defineOperation({
  name: 'create-webhook',
  method: 'POST',
  path: '/webhooks',
  summary:
    "Subscribe an https URL to the team's events (all types when eventTypes is absent); the signing secret is shown once. At most 20 a team.",
  access: { data: 'readWrite', events: 'readWrite', webhookSecretKey: true },
  body: {
    schema: createWebhookBodySchema,
    required: true,
    example: {
      url: 'https://example.com/hooks/pipeline-synthesis',
      eventTypes: ['synthesis_run.generated', 'synthesis_run.failed'],
      description: 'Page the on-call engineer',
    },
  },
  response: { status: 201, schema: createdWebhookAnswer },
  errors: [],
});

export const handler = /* @__PURE__ */ operationHandler(createWebhook, () => {
  const create = makeCreateWebhook({
    webhooks: webhookRepositoryFromEnv(),
    secretKey: webhookSecretKeyFromEnv(),
    checkUrl: webhookUrlCheckFromEnv(),
    clock: systemClock,
    ids: nanoidGenerator,
  });
  return async ({ principal, body }) => ({ body: await create(principal, body) });
});
