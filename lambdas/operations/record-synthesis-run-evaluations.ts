/* POST /synthesis-runs/{id}/evaluations {results}: a runner's results; the run's summary is rewritten. */
import * as z from 'zod/mini';
import { LIMITS, runIdSchema } from '../core/schemas/common.ts';
import { evaluationSummarySchema, recordEvaluationsBodySchema } from '../core/schemas/evaluation.ts';
import { makeRecordEvaluations } from '../core/use-cases/evaluation.ts';
import { operationHandler } from '../http/operation.ts';
import { systemClock } from '../wiring/clock.ts';
import { evaluationStoreFromEnv, runRepositoryFromEnv } from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';

export const recordSynthesisRunEvaluations = defineOperation({
  name: 'record-synthesis-run-evaluations',
  method: 'POST',
  path: '/synthesis-runs/{id}/evaluations',
  summary: `Record up to ${LIMITS.evaluationBatch} results of replaying the evaluation set (a later result for a case and arm replaces the earlier); answers the run's evaluation summary.`,
  access: { runs: 'readWrite', data: 'readWrite' },
  params: { id: runIdSchema },
  body: {
    schema: recordEvaluationsBodySchema,
    required: true,
    example: {
      results: [
        { executionId: 'exec-1', arm: 'base', passed: false, durationMs: 1620, detail: 'timed out' },
        { executionId: 'exec-1', arm: 'candidate', passed: true, durationMs: 910, costUsd: 0.0021 },
      ],
    },
  },
  response: { status: 200, schema: z.object({ evaluation: evaluationSummarySchema }) },
  errors: [404, 409],
});

export const handler = /* @__PURE__ */ operationHandler(recordSynthesisRunEvaluations, () => {
  const record = makeRecordEvaluations({
    runs: runRepositoryFromEnv(),
    evaluations: evaluationStoreFromEnv(),
    clock: systemClock,
  });
  return async ({ principal, params, body }) => ({
    body: { evaluation: await record(principal, params.id, body.results) },
  });
});
