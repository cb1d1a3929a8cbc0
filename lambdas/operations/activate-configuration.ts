/* POST /pipelines/{pipelineId}/configurations/{configurationId}/activate {reason?}: roll back or forward. */

import { idSchema } from '../core/schemas/common.ts';
import { activateBodySchema, activationSchema } from '../core/schemas/pipelines.ts';
import { makeActivateConfiguration } from '../core/use-cases/activations.ts';
import { operationHandler } from '../http/operation.ts';
import { nanoidGenerator, systemClock } from '../wiring/clock.ts';
import {
  approvalRulesStoreFromEnv,
  pipelineRepositoryFromEnv,
  runRepositoryFromEnv,
} from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';

export const activateConfiguration = defineOperation({
  name: 'activate-configuration',
  method: 'POST',
  path: '/pipelines/{pipelineId}/configurations/{configurationId}/activate',
  summary:
    'Activate a configuration that was active before (roll back or forward), under the approval rules, recording who, when and why; ' +
    "a candidate a rollout rolled back needs an admin's `override`.",
  // runs: the rules judge the run a configuration came from; settings: the approval rules.
  access: { runs: 'read', data: 'readWrite', events: 'readWrite', settings: 'read' },
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
    approvalRules: approvalRulesStoreFromEnv(),
    clock: systemClock,
    ids: nanoidGenerator,
  });
  return async ({ principal, params, body }) => ({
    body: await activate(principal, params.pipelineId, params.configurationId, body),
  });
});
