/* PATCH /pipelines/{pipelineId}/monitors/{monitorId}: change a monitor's definition; judged by it from the next pass. */
import { idSchema } from '../core/schemas/common.ts';
import { monitorSchema, updateMonitorBodySchema } from '../core/schemas/monitors.ts';
import { makeUpdateMonitor } from '../core/use-cases/monitors.ts';
import { operationHandler } from '../http/operation.ts';
import { systemClock } from '../wiring/clock.ts';
import { monitorRepositoryFromEnv, pipelineReadsFromEnv } from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';

export const updateMonitor = defineOperation({
  name: 'update-monitor',
  method: 'PATCH',
  path: '/pipelines/{pipelineId}/monitors/{monitorId}',
  summary:
    "Change a monitor's name, metric, comparator, threshold, window or minimum (admins and members); its state stays until the next judgement, within a minute.",
  access: { data: 'readWrite' },
  params: { pipelineId: idSchema, monitorId: idSchema },
  body: { schema: updateMonitorBodySchema, required: true, example: { threshold: 0.1 } },
  response: { status: 200, schema: monitorSchema },
  errors: [400, 404],
});

export const handler = /* @__PURE__ */ operationHandler(updateMonitor, () => {
  const update = makeUpdateMonitor({
    pipelines: pipelineReadsFromEnv(),
    monitors: monitorRepositoryFromEnv(),
    clock: systemClock,
  });
  return async ({ principal, params, body }) => ({
    body: await update(principal, params.pipelineId, params.monitorId, body),
  });
});
