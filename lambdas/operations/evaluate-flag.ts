/*
 * POST /ofrep/v1/evaluate/flags/{key}: OpenFeature's remote evaluation of one flag, the pipeline
 * whose id is the key (use-cases/ofrep.ts). Serving's cost: one GetItem; errors in OFREP's shapes.
 */
import { idSchema } from '../core/schemas/common.ts';
import { ofrepEvaluationSchema, ofrepRequestSchema } from '../core/schemas/ofrep.ts';
import { makeEvaluateFlag } from '../core/use-cases/ofrep.ts';
import { ofrepErrors } from '../http/ofrep.ts';
import { operationHandler } from '../http/operation.ts';
import { pipelineReadsFromEnv } from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';
import { ofrepErrorBodies } from './shapes.ts';

export const evaluateFlag = defineOperation({
  name: 'evaluate-flag',
  method: 'POST',
  path: '/ofrep/v1/evaluate/flags/{key}',
  summary:
    'OpenFeature Remote Evaluation Protocol (OFREP): the configuration of the pipeline whose id is the flag key, ' +
    'for the context. The targeting key is the routing key of serving-configuration (the same arm for the same key); ' +
    'the variant is the configuration id; reason STATIC outside a rollout, SPLIT inside one.',
  access: { data: 'read' },
  rateLimit: 'evaluation',
  params: { key: idSchema },
  body: {
    schema: ofrepRequestSchema,
    required: true,
    example: { context: { targetingKey: 'conversation-42' } },
  },
  response: { status: 200, schema: ofrepEvaluationSchema },
  errors: [404],
  errorBodies: ofrepErrorBodies({ withKey: true }),
});

export const handler = /* @__PURE__ */ operationHandler(evaluateFlag, () => {
  const evaluate = makeEvaluateFlag({ pipelines: pipelineReadsFromEnv() }, Math.random);
  return async ({ principal, params, body }) => ({
    body: await evaluate(principal, params.key, body.context.targetingKey),
  });
}).use(ofrepErrors({ withKey: true }));
