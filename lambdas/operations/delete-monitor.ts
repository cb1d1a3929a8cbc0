/* DELETE /pipelines/{pipelineId}/monitors/{monitorId}: 204; the monitor is judged no more. */
import { idSchema } from '../core/schemas/common.ts';
import { makeDeleteMonitor } from '../core/use-cases/monitors.ts';
import { operationHandler } from '../http/operation.ts';
import { monitorRepositoryFromEnv, pipelineReadsFromEnv } from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';

export const deleteMonitor = defineOperation({
  name: 'delete-monitor',
  method: 'DELETE',
  path: '/pipelines/{pipelineId}/monitors/{monitorId}',
  summary: 'Delete a monitor (admins and members); it is judged no more.',
  access: { data: 'readWrite' },
  params: { pipelineId: idSchema, monitorId: idSchema },
  response: { status: 204 },
  errors: [404],
});

export const handler = /* @__PURE__ */ operationHandler(deleteMonitor, () => {
  const remove = makeDeleteMonitor({
    pipelines: pipelineReadsFromEnv(),
    monitors: monitorRepositoryFromEnv(),
  });
  return async ({ principal, params }) => {
    await remove(principal, params.pipelineId, params.monitorId);
    return {};
  };
});
