/* GET /synthesis-runs/{id}/effect: what an approved run's changes did, measured on executions. */

import * as z from 'zod/mini';
import { runIdSchema } from '../core/schemas/common.ts';
import { effectSchema } from '../core/schemas/rollouts.ts';
import { makeGetEffect } from '../core/use-cases/effect.ts';
import { operationHandler } from '../http/operation.ts';
import { systemClock } from '../wiring/clock.ts';
import { makeRecentEffectStates } from '../wiring/recent-effect-states.ts';
import {
  rolloutRepositoryFromEnv,
  runRepositoryFromEnv,
  teamSettingsStoreFromEnv,
} from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';

export const getSynthesisRunEffect = defineOperation({
  name: 'get-synthesis-run-effect',
  method: 'GET',
  path: '/synthesis-runs/{id}/effect',
  summary:
    "The measured effect of an approved run: the rollout's two arms, or before against after, per touched slot, " +
    'with every guarded metric judged by an anytime-valid test (metrics[]); ?history=true adds each judgement. ' +
    '409 for a run not approved.',
  // data: the last measurement is kept (an item with a TTL) and answered again while nothing new was recorded.
  access: { runs: 'read', data: 'readWrite' },
  params: { id: runIdSchema },
  query: {
    history: {
      schema: z.optional(z.enum(['true', 'false'])),
      description:
        "`true` adds `history`: each judgement's difference and interval per metric, oldest first.",
      invalid: 'history must be true or false.',
      documented: { type: 'string', enum: ['true', 'false'] },
    },
  },
  response: { status: 200, schema: effectSchema },
  errors: [404, 409],
});

export const handler = /* @__PURE__ */ operationHandler(getSynthesisRunEffect, () => {
  const effect = makeGetEffect({
    runs: runRepositoryFromEnv(),
    rollouts: rolloutRepositoryFromEnv(),
    clock: systemClock,
    settings: teamSettingsStoreFromEnv(),
    recentStates: makeRecentEffectStates(),
  });
  return async ({ principal, params, query }) => ({
    body: await effect(principal, params.id, { history: query.history === 'true' }),
  });
});
