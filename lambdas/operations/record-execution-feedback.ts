/*
 * POST /pipelines/{pipelineId}/executions/{executionId}/feedback {rating, note?}: a person's Good or
 * Bad on one execution, recorded as a human_feedback signal citing it, with their name.
 */
import { idSchema } from '../core/schemas/common.ts';
import { signalSchema } from '../core/schemas/records.ts';
import { feedbackBodySchema, makeRecordFeedback } from '../core/use-cases/feedback.ts';
import { makeRecordSignals } from '../core/use-cases/pipelines.ts';
import { makeGetExecution } from '../core/use-cases/record-reads.ts';
import { operationHandler } from '../http/operation.ts';
import { nanoidGenerator, systemClock } from '../wiring/clock.ts';
import {
  peopleDirectoryFromEnv,
  pipelineRepositoryFromEnv,
  recordReadsFromEnv,
  teamSettingsStoreFromEnv,
} from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';

export const recordExecutionFeedback = defineOperation({
  name: 'record-execution-feedback',
  method: 'POST',
  path: '/pipelines/{pipelineId}/executions/{executionId}/feedback',
  summary:
    'Say whether one execution was good or bad (admins and members): a signal of kind human_feedback citing it, value 1 (good) or 0 (bad), severity info or warning, naming who said it (recordedBy, recordedByName). It counts like any signal: in synthesis evidence, the series and as a guarded metric.',
  access: { data: 'readWrite', readsNames: true },
  params: { pipelineId: idSchema, executionId: idSchema },
  body: {
    schema: feedbackBodySchema,
    required: true,
    example: { rating: 'bad', note: 'Cited the wrong policy' },
  },
  response: { status: 201, schema: signalSchema },
  errors: [404, 409],
});

export const handler = /* @__PURE__ */ operationHandler(recordExecutionFeedback, () => {
  const pipelines = pipelineRepositoryFromEnv();
  const settings = teamSettingsStoreFromEnv();
  const recordFeedback = makeRecordFeedback({
    getExecution: makeGetExecution({ pipelines, settings, reads: recordReadsFromEnv(), clock: systemClock }),
    record: makeRecordSignals({ pipelines, clock: systemClock, ids: nanoidGenerator, settings }),
    people: peopleDirectoryFromEnv(),
  });
  return async ({ principal, params, body }) => ({
    body: await recordFeedback(principal, params.pipelineId, params.executionId, body),
  });
});
