/* POST /pipelines/{pipelineId}/monitors: 201 a monitor, no_data until the judge's next pass (within a minute). */
import { idSchema } from '../core/schemas/common.ts';
import {
  createMonitorBodySchema,
  MAX_MONITORS_PER_PIPELINE,
  monitorSchema,
} from '../core/schemas/monitors.ts';
import { makeCreateMonitor } from '../core/use-cases/monitors.ts';
import { operationHandler } from '../http/operation.ts';
import { nanoidGenerator, systemClock } from '../wiring/clock.ts';
import { monitorRepositoryFromEnv, pipelineReadsFromEnv } from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';

export const createMonitor = defineOperation({
  name: 'create-monitor',
  method: 'POST',
  path: '/pipelines/{pipelineId}/monitors',
  summary: `Watch a metric of the pipeline over a trailing window (5–1440 minutes), judged every minute into ok, alert or no_data; each change of state is an event. At most ${MAX_MONITORS_PER_PIPELINE} a pipeline; admins and members.`,
  access: { data: 'readWrite' },
  params: { pipelineId: idSchema },
  body: {
    schema: createMonitorBodySchema,
    required: true,
    example: {
      name: 'Failure rate over 5 %',
      metric: 'failure_rate',
      comparator: 'above',
      threshold: 0.05,
      windowMinutes: 15,
      minExecutions: 20,
    },
  },
  response: { status: 201, schema: monitorSchema },
  errors: [400, 404],
});

export const handler = /* @__PURE__ */ operationHandler(createMonitor, () => {
  const create = makeCreateMonitor({
    pipelines: pipelineReadsFromEnv(),
    monitors: monitorRepositoryFromEnv(),
    clock: systemClock,
    ids: nanoidGenerator,
  });
  return async ({ principal, params, body }) => ({ body: await create(principal, params.pipelineId, body) });
});
