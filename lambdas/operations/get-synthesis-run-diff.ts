/* GET /synthesis-runs/{id}/diff: base and proposed configurations compared slot by slot. */
import { runIdSchema } from '../core/schemas/common.ts';
import { makeDiffRun } from '../core/use-cases/review.ts';
import { operationHandler } from '../http/operation.ts';
import { pipelineReadsFromEnv, runRepositoryFromEnv } from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';
import { runDiffAnswer } from './shapes.ts';

export const getSynthesisRunDiff = defineOperation({
  name: 'get-synthesis-run-diff',
  method: 'GET',
  path: '/synthesis-runs/{id}/diff',
  summary: 'Base and proposed configurations of a run, compared slot by slot.',
  access: { runs: 'read', data: 'read' },
  params: { id: runIdSchema },
  response: { status: 200, schema: runDiffAnswer },
  errors: [404, 409],
});

export const handler = /* @__PURE__ */ operationHandler(getSynthesisRunDiff, () => {
  const diff = makeDiffRun({ runs: runRepositoryFromEnv(), pipelines: pipelineReadsFromEnv() });
  return async ({ principal, params }) => ({ body: await diff(principal, params.id) });
});
