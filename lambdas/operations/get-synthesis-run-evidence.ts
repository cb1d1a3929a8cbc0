/* GET /synthesis-runs/{id}/evidence: the signals and executions the run's findings cite. */
import * as z from 'zod/mini';
import { runIdSchema } from '../core/schemas/common.ts';
import { executionSchema, signalSchema } from '../core/schemas/records.ts';
import { makeGetRunEvidence } from '../core/use-cases/synthesis.ts';
import { operationHandler } from '../http/operation.ts';
import { systemClock } from '../wiring/clock.ts';
import {
  evidenceStoreFromEnv,
  runRepositoryFromEnv,
  teamSettingsStoreFromEnv,
} from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';

export const getSynthesisRunEvidence = defineOperation({
  name: 'get-synthesis-run-evidence',
  method: 'GET',
  path: '/synthesis-runs/{id}/evidence',
  summary:
    "The signals and executions the run's findings cite, as the run read them, so a reviewer reads records, not ids.",
  access: { runs: 'read', data: 'read' },
  params: { id: runIdSchema },
  response: {
    status: 200,
    schema: z.object({ signals: z.array(signalSchema), executions: z.array(executionSchema) }),
  },
  errors: [404],
});

export const handler = /* @__PURE__ */ operationHandler(getSynthesisRunEvidence, () => {
  const getEvidence = makeGetRunEvidence({
    runs: runRepositoryFromEnv(),
    evidence: evidenceStoreFromEnv(),
    settings: teamSettingsStoreFromEnv(),
    clock: systemClock,
  });
  return async ({ principal, params }) => ({ body: await getEvidence(principal, params.id) });
});
