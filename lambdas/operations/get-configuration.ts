/* GET /pipelines/{pipelineId}/configurations/{configurationId}: one immutable configuration. */

import { idSchema } from '../core/schemas/common.ts';
import { configurationSchema } from '../core/schemas/pipelines.ts';
import { makeGetConfiguration } from '../core/use-cases/pipelines.ts';
import { operationHandler } from '../http/operation.ts';
import { pipelineReadsFromEnv } from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';

export const getConfiguration = defineOperation({
  name: 'get-configuration',
  method: 'GET',
  path: '/pipelines/{pipelineId}/configurations/{configurationId}',
  summary: 'One configuration of a pipeline.',
  access: { data: 'read' },
  params: { pipelineId: idSchema, configurationId: idSchema },
  response: { status: 200, schema: configurationSchema },
  errors: [404],
});

export const handler = /* @__PURE__ */ operationHandler(getConfiguration, () => {
  const get = makeGetConfiguration({ pipelines: pipelineReadsFromEnv() });
  return async ({ principal, params }) => ({
    body: await get(principal, params.pipelineId, params.configurationId),
  });
});
