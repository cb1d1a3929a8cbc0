/*
 * GET /pipelines/{pipelineId}/serving-configuration?routingKey=…: what a pipeline runs now, on the
 * customer's hot path. One GetItem for the pipeline (its active rollout rides on it) and one for
 * the configuration, skipped when If-None-Match already names the answer (304).
 */
import * as z from 'zod/mini';
import { idSchema } from '../core/schemas/common.ts';
import { routingKeySchema, servingConfigurationSchema } from '../core/schemas/pipelines.ts';
import { makeServeConfiguration } from '../core/use-cases/serving.ts';
import { operationHandler } from '../http/operation.ts';
import { pipelineReadsFromEnv } from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';

/** A client may reuse an answer this long without asking; then it revalidates with If-None-Match. */
export const SERVING_MAX_AGE_SECONDS = 10;

export const getServingConfiguration = defineOperation({
  name: 'get-serving-configuration',
  method: 'GET',
  path: '/pipelines/{pipelineId}/serving-configuration',
  summary:
    'The configuration a pipeline runs for a routing key: the active one, or during a rollout the arm the key is ' +
    'assigned to (a hash of the rollout id and the key). Sends an ETag; If-None-Match with it answers 304.',
  access: { data: 'read' },
  rateLimit: 'evaluation',
  params: { pipelineId: idSchema },
  query: {
    routingKey: {
      schema: z.optional(routingKeySchema),
      description:
        'A user or conversation id: the same key always gets the same arm of a rollout. Without one, each call draws at random.',
      invalid: 'routingKey must be 1-256 characters.',
      documented: { type: 'string', minLength: 1, maxLength: 256 },
    },
  },
  headers: {
    'if-none-match': {
      schema: z.optional(z.string().check(z.maxLength(1_000))),
      description: 'The ETag of an earlier answer: 304 while the answer is the same.',
      documented: { type: 'string' },
    },
  },
  response: {
    status: 200,
    schema: servingConfigurationSchema,
    headers: {
      ETag: { type: 'string', description: 'Names the answer (configuration, arm, rollout).' },
      'Cache-Control': { type: 'string', description: `private, max-age=${SERVING_MAX_AGE_SECONDS}` },
    },
    alsoAnswers: { 304: 'Not Modified: the ETag sent in If-None-Match still names the answer.' },
  },
  errors: [404],
});

export const handler = /* @__PURE__ */ operationHandler(getServingConfiguration, () => {
  const serve = makeServeConfiguration({ pipelines: pipelineReadsFromEnv() });
  return async ({ principal, params, query, headers }) => {
    const { etag, answer } = await serve(
      principal,
      params.pipelineId,
      query.routingKey,
      headers['if-none-match'],
    );
    const caching = { etag, 'cache-control': `private, max-age=${SERVING_MAX_AGE_SECONDS}` };
    if (!answer) return { raw: { statusCode: 304, headers: caching, body: '' } };
    return { body: answer, headers: caching };
  };
});
