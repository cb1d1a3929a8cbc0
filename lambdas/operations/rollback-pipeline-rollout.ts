/* POST /pipelines/{pipelineId}/rollout/rollback {reason?}: ends the active rollout; the base stays active. */

import { idSchema } from '../core/schemas/common.ts';
import { endRolloutBodySchema, rolloutSchema } from '../core/schemas/rollouts.ts';
import { makeEndRollout } from '../core/use-cases/rollouts.ts';
import { operationHandler } from '../http/operation.ts';
import { nanoidGenerator, systemClock } from '../wiring/clock.ts';
import { pipelineRepositoryFromEnv, rolloutStoreFromEnv } from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';

export const rollbackPipelineRollout = defineOperation({
  name: 'rollback-pipeline-rollout',
  method: 'POST',
  path: '/pipelines/{pipelineId}/rollout/rollback',
  summary: 'End the active rollout: the base stays active. 409 when no rollout is active.',
  access: { data: 'readWrite', events: 'readWrite' },
  params: { pipelineId: idSchema },
  body: {
    schema: endRolloutBodySchema,
    required: false,
    example: { reason: 'Latency doubled on the candidate.' },
  },
  response: { status: 200, schema: rolloutSchema },
  errors: [404, 409],
});

export const handler = /* @__PURE__ */ operationHandler(rollbackPipelineRollout, () => {
  const end = makeEndRollout(
    {
      pipelines: pipelineRepositoryFromEnv(),
      rollouts: rolloutStoreFromEnv(),
      clock: systemClock,
      ids: nanoidGenerator,
    },
    'rolled_back',
  );
  return async ({ principal, params, body }) => ({
    body: await end(principal, params.pipelineId, body.reason),
  });
});
