/* GET /pipelines/{pipelineId}: one pipeline of the caller's team. */
import { idSchema } from '../core/schemas/common.ts';
import { pipelineSchema } from '../core/schemas/pipelines.ts';
import { makeGetPipeline } from '../core/use-cases/pipelines.ts';
import { operationHandler } from '../http/operation.ts';
import { pipelineReadsFromEnv } from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';

export const getPipeline = defineOperation({
  name: 'get-pipeline',
  method: 'GET',
  path: '/pipelines/{pipelineId}',
  summary: 'One pipeline.',
  access: { data: 'read' },
  params: { pipelineId: idSchema },
  response: { status: 200, schema: pipelineSchema },
  errors: [404],
});

export const handler = /* @__PURE__ */ operationHandler(getPipeline, () => {
  const get = makeGetPipeline({ pipelines: pipelineReadsFromEnv() });
  return async ({ principal, params }) => ({ body: await get(principal, params.pipelineId) });
});
