/* DELETE /pipelines/{pipelineId}: 202 with the deletion's receipt; a queued job removes everything of it. */
import { deletionReceiptSchema } from '../core/lifecycle.ts';
import { idSchema } from '../core/schemas/common.ts';
import { makeDeletePipeline } from '../core/use-cases/lifecycle.ts';
import { operationHandler } from '../http/operation.ts';
import { locationOf } from '../http/response.ts';
import { lifecycleQueueFromEnv } from '../sqs/lifecycle-queue.ts';
import { getSqsClient } from '../sqs/sqs-queue.ts';
import { nanoidGenerator, systemClock } from '../wiring/clock.ts';
import { deletionRequestsFromEnv, pipelineReadsFromEnv, runHiderFromEnv } from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';

export const deletePipeline = defineOperation({
  name: 'delete-pipeline',
  method: 'DELETE',
  path: '/pipelines/{pipelineId}',
  summary:
    'Delete a pipeline and everything of it (admins). It answers 404 from now on; the receipt completes with the counts of what was removed.',
  access: { runs: 'readWrite', data: 'readWrite', events: 'readWrite', send: ['lifecycle-jobs'] },
  params: { pipelineId: idSchema },
  response: {
    status: 202,
    schema: deletionReceiptSchema,
    headers: { Location: { type: 'string', description: 'The URL of the receipt to poll.' } },
  },
  errors: [404, 409],
});

export const handler = /* @__PURE__ */ operationHandler(deletePipeline, () => {
  const remove = makeDeletePipeline({
    pipelines: pipelineReadsFromEnv(),
    deletions: deletionRequestsFromEnv(),
    queue: lifecycleQueueFromEnv(getSqsClient()),
    clock: systemClock,
    ids: nanoidGenerator,
    runs: runHiderFromEnv(),
  });
  return async ({ principal, params, event }) => {
    const receipt = await remove(principal, params.pipelineId);
    return { body: receipt, headers: { location: locationOf(event, `/deletions/${receipt.id}`) } };
  };
});
