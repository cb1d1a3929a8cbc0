/* POST /pipelines/{pipelineId}/rollout/promote {reason?}: ends the active rollout; activates its candidate for all traffic (an activation of source "rollout"). */

import { nameRollout } from '../core/people.ts';
import { idSchema } from '../core/schemas/common.ts';
import { namedRolloutSchema } from '../core/schemas/people.ts';
import { endRolloutBodySchema } from '../core/schemas/rollouts.ts';
import { makeEndRollout } from '../core/use-cases/rollouts.ts';
import { operationHandler } from '../http/operation.ts';
import { nanoidGenerator, systemClock } from '../wiring/clock.ts';
import { peopleDirectoryFromEnv, pipelineReadsFromEnv, rolloutStoreFromEnv } from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';

export const promotePipelineRollout = defineOperation({
  name: 'promote-pipeline-rollout',
  method: 'POST',
  path: '/pipelines/{pipelineId}/rollout/promote',
  summary:
    'End the active rollout: activates its candidate for all traffic (an activation of source "rollout"). 409 when no rollout is active.',
  access: { data: 'readWrite', events: 'readWrite', readsNames: true },
  params: { pipelineId: idSchema },
  body: {
    schema: endRolloutBodySchema,
    required: false,
    example: { reason: 'Candidate held up for a week.' },
  },
  response: { status: 200, schema: namedRolloutSchema },
  errors: [404, 409],
});

export const handler = /* @__PURE__ */ operationHandler(promotePipelineRollout, () => {
  const end = makeEndRollout(
    {
      pipelines: pipelineReadsFromEnv(),
      rollouts: rolloutStoreFromEnv(),
      clock: systemClock,
      ids: nanoidGenerator,
    },
    'promoted',
  );
  const people = peopleDirectoryFromEnv();
  return async ({ principal, params, body }) => ({
    body: await nameRollout(people, principal.teamId, await end(principal, params.pipelineId, body.reason)),
  });
});
