/* GET /pipelines/{pipelineId}/executions?status&configurationId&limit&cursor: executions, newest first. */
import * as z from 'zod/mini';
import { idSchema } from '../core/schemas/common.ts';
import { executionSchema } from '../core/schemas/records.ts';
import { makeListExecutions } from '../core/use-cases/record-reads.ts';
import { withSealedCursors } from '../http/cursors.ts';
import { operationHandler } from '../http/operation.ts';
import { systemClock } from '../wiring/clock.ts';
import { cursorSealFromEnv } from '../wiring/cursors.ts';
import {
  pipelineReadsFromEnv,
  recordReadsFromEnv,
  teamSettingsStoreFromEnv,
} from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';
import { pageQuery } from './page-query.ts';
import { pageOf } from './parameters.ts';

export const listExecutions = defineOperation({
  name: 'list-executions',
  method: 'GET',
  path: '/pipelines/{pipelineId}/executions',
  summary:
    "The pipeline's executions (recorded through the API or assembled from its traces), newest first by start, optionally by status and configuration.",
  access: { data: 'read', sessionSecret: true },
  params: { pipelineId: idSchema },
  query: {
    ...pageQuery,
    status: {
      schema: z.optional(z.enum(['succeeded', 'failed'])),
      description: 'Only executions with this status.',
      invalid: 'status must be succeeded or failed.',
      documented: { type: 'string', enum: ['succeeded', 'failed'] },
    },
    configurationId: {
      schema: z.optional(idSchema),
      description: 'Only executions of this configuration.',
      invalid: 'configurationId must be a configuration id.',
      documented: { type: 'string' },
    },
  },
  response: { status: 200, schema: pageOf(executionSchema) },
  errors: [404],
});

export const handler = /* @__PURE__ */ operationHandler(listExecutions, () => {
  const list = makeListExecutions({
    pipelines: pipelineReadsFromEnv(),
    settings: teamSettingsStoreFromEnv(),
    reads: recordReadsFromEnv(),
    clock: systemClock,
  });
  return withSealedCursors(listExecutions, cursorSealFromEnv(), async ({ principal, params, query }) => ({
    body: await list(
      principal,
      params.pipelineId,
      { status: query.status, configurationId: query.configurationId },
      { limit: query.limit, cursor: query.cursor },
    ),
  }));
});
