/* GET /synthesis-runs/{id}: the run, for polling. */
import { runIdSchema } from '../core/schemas/common.ts';
import { synthesisRunSchema } from '../core/schemas/runs.ts';
import { makeGetSynthesisRun } from '../core/use-cases/synthesis.ts';
import { operationHandler } from '../http/operation.ts';
import { runRepositoryFromEnv } from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';

export const getSynthesisRun = defineOperation({
  name: 'get-synthesis-run',
  method: 'GET',
  path: '/synthesis-runs/{id}',
  summary: 'A synthesis run; poll it until generated or failed.',
  access: { runs: 'read' },
  params: { id: runIdSchema },
  response: { status: 200, schema: synthesisRunSchema },
  errors: [404],
});

export const handler = /* @__PURE__ */ operationHandler(getSynthesisRun, () => {
  // One GetItem: a run of a deleted pipeline is hidden on the run itself (see delete-pipeline).
  const getRun = makeGetSynthesisRun({ runs: runRepositoryFromEnv() });
  return async ({ principal, params }) => ({ body: await getRun(principal, params.id) });
});
