/* POST /synthesis-runs/{id}/approve: the run's proposal becomes the active configuration, atomically. */
import { runIdSchema, synthesisRunSchema } from '../core/schemas.ts';
import { makeApproveRun } from '../core/use-cases/review.ts';
import { operationHandler } from '../http/operation.ts';
import { nanoidGenerator, systemClock } from '../wiring/clock.ts';
import { pipelineRepositoryFromEnv, runRepositoryFromEnv } from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';

export const approveSynthesisRun = defineOperation({
  name: 'approve-synthesis-run',
  method: 'POST',
  path: '/synthesis-runs/{id}/approve',
  summary: 'Approve a generated run: its proposal becomes the active configuration, atomically.',
  access: { runs: 'readWrite', data: 'readWrite', events: 'readWrite' },
  params: { id: runIdSchema },
  response: { status: 200, schema: synthesisRunSchema },
  errors: [404, 409],
});

export const handler = /* @__PURE__ */ operationHandler(approveSynthesisRun, () => {
  const approve = makeApproveRun({
    runs: runRepositoryFromEnv(),
    pipelines: pipelineRepositoryFromEnv(),
    clock: systemClock,
    ids: nanoidGenerator,
  });
  return async ({ principal, params }) => ({ body: await approve(principal, params.id) });
});
