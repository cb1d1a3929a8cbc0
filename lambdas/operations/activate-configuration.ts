/* POST /pipelines/{pipelineId}/configurations/{configurationId}/activate {reason?}: roll back or forward. */

import { idSchema } from '../core/schemas/common.ts';
import { activateBodySchema, activationSchema } from '../core/schemas/pipelines.ts';
import { makeActivateConfiguration } from '../core/use-cases/activations.ts';
import { operationHandler } from '../http/operation.ts';
import { nanoidGenerator, systemClock } from '../wiring/clock.ts';
import { pipelineRepositoryFromEnv, runRepositoryFromEnv } from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';

export const activateConfiguration = defineOperation({
  name: 'activate-configuration',
  method: 'POST',
  path: '/pipelines/{pipelineId}/configurations/{configurationId}/activate',
  summary: 'Activate an earlier configuration (roll back), recording who, when and why.',
  // runs: only an approved run's proposal may be activated again.
  access: { runs: 'read', data: 'readWrite', events: 'readWrite' },
  params: { pipelineId: idSchema, configurationId: idSchema },
  body: {
    schema: activateBodySchema,
    required: false,
    example: { reason: 'Version 2 doubled the p95 latency.' },
  },
  response: { status: 200, schema: activationSchema },
  errors: [404, 409],
});

export const handler = /* @__PURE__ */ operationHandler(activateConfiguration, () => {
  const activate = makeActivateConfiguration({
    runs: runRepositoryFromEnv(),
    pipelines: pipelineRepositoryFromEnv(),
    clock: systemClock,
    ids: nanoidGenerator,
  });
  return async ({ principal, params, body }) => ({
    body: await activate(principal, params.pipelineId, params.configurationId, body.reason),
  });
});
