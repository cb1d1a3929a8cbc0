/* GET /pipelines/{pipelineId}/rollout: the pipeline's active rollout, or its latest. */

import { nameRollout } from '../core/people.ts';
import { idSchema } from '../core/schemas/common.ts';
import { namedRolloutSchema } from '../core/schemas/people.ts';
import { makeGetRollout } from '../core/use-cases/rollouts.ts';
import { operationHandler } from '../http/operation.ts';
import { peopleDirectoryFromEnv, pipelineReadsFromEnv, rolloutStoreFromEnv } from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';

export const getPipelineRollout = defineOperation({
  name: 'get-pipeline-rollout',
  method: 'GET',
  path: '/pipelines/{pipelineId}/rollout',
  summary: "The pipeline's active rollout or, when none is active, its latest (404 if it never had one).",
  access: { data: 'read', readsNames: true },
  params: { pipelineId: idSchema },
  response: { status: 200, schema: namedRolloutSchema },
  errors: [404],
});

export const handler = /* @__PURE__ */ operationHandler(getPipelineRollout, () => {
  const get = makeGetRollout({
    pipelines: pipelineReadsFromEnv(),
    rollouts: rolloutStoreFromEnv(),
  });
  const people = peopleDirectoryFromEnv();
  return async ({ principal, params }) => ({
    body: await nameRollout(people, principal.teamId, await get(principal, params.pipelineId)),
  });
});
