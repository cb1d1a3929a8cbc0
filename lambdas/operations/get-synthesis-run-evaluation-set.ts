/* GET /synthesis-runs/{id}/evaluation-set: the cases a runner replays, chosen once for the run. */

import { runIdSchema } from '../core/schemas/common.ts';
import { evaluationSetSchema } from '../core/schemas/evaluation.ts';
import { makeGetEvaluationSet } from '../core/use-cases/evaluation.ts';
import { operationHandler } from '../http/operation.ts';
import { systemClock } from '../wiring/clock.ts';
import {
  evaluationStoreFromEnv,
  evidenceStoreFromEnv,
  pipelineReadsFromEnv,
  runRepositoryFromEnv,
  teamSettingsStoreFromEnv,
} from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';

export const getSynthesisRunEvaluationSet = defineOperation({
  name: 'get-synthesis-run-evaluation-set',
  method: 'GET',
  path: '/synthesis-runs/{id}/evaluation-set',
  summary:
    'The executions to replay on the base and the proposed configuration: those the findings cite, up to 50 more failed and 50 succeeded, chosen once for the run.',
  access: { runs: 'read', data: 'readWrite' },
  params: { id: runIdSchema },
  response: { status: 200, schema: evaluationSetSchema },
  errors: [404, 409],
});

export const handler = /* @__PURE__ */ operationHandler(getSynthesisRunEvaluationSet, () => {
  const getSet = makeGetEvaluationSet({
    runs: runRepositoryFromEnv(),
    pipelines: pipelineReadsFromEnv(),
    evidence: evidenceStoreFromEnv(),
    evaluations: evaluationStoreFromEnv(),
    clock: systemClock,
    settings: teamSettingsStoreFromEnv(),
  });
  return async ({ principal, params }) => ({ body: await getSet(principal, params.id) });
});
