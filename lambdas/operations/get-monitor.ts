/* GET /pipelines/{pipelineId}/monitors/{monitorId}: one monitor and its state. */
import { idSchema } from '../core/schemas/common.ts';
import { monitorSchema } from '../core/schemas/monitors.ts';
import { makeGetMonitor } from '../core/use-cases/monitors.ts';
import { operationHandler } from '../http/operation.ts';
import { monitorRepositoryFromEnv, pipelineReadsFromEnv } from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';

export const getMonitor = defineOperation({
  name: 'get-monitor',
  method: 'GET',
  path: '/pipelines/{pipelineId}/monitors/{monitorId}',
  summary: 'One monitor with its state, since when and the last value judged.',
  access: { data: 'read' },
  params: { pipelineId: idSchema, monitorId: idSchema },
  response: { status: 200, schema: monitorSchema },
  errors: [404],
});

export const handler = /* @__PURE__ */ operationHandler(getMonitor, () => {
  const get = makeGetMonitor({
    pipelines: pipelineReadsFromEnv(),
    monitors: monitorRepositoryFromEnv(),
  });
  return async ({ principal, params }) => ({
    body: await get(principal, params.pipelineId, params.monitorId),
  });
});
