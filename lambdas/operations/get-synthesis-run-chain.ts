/* GET /synthesis-runs/{id}/chain: the run's chain (its first run and refinements), each round's figures and the best run. */
import { runChainSchema } from '../core/schemas/chain.ts';
import { runIdSchema } from '../core/schemas/common.ts';
import { makeGetRunChain } from '../core/use-cases/chain.ts';
import { operationHandler } from '../http/operation.ts';
import { runRepositoryFromEnv } from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';

export const getSynthesisRunChain = defineOperation({
  name: 'get-synthesis-run-chain',
  method: 'GET',
  path: '/synthesis-runs/{id}/chain',
  summary:
    "A run's chain: its first run and every refinement (parentRunId), oldest first, each with its evaluation's held-out figures, and the best run to review.",
  access: { runs: 'read' },
  params: { id: runIdSchema },
  response: { status: 200, schema: runChainSchema },
  errors: [404],
});

export const handler = /* @__PURE__ */ operationHandler(getSynthesisRunChain, () => {
  // One GetItem for the run, one for the chain's first run and one BatchGetItem for the rest.
  const getChain = makeGetRunChain({ runs: runRepositoryFromEnv() });
  return async ({ principal, params }) => ({ body: await getChain(principal, params.id) });
});
