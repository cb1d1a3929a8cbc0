/* POST /pipelines/{pipelineId}/executions {executions}: records a batch, all or nothing. */
import * as z from 'zod/mini';
import { executionSchema, idSchema, LIMITS, recordExecutionsBodySchema } from '../core/schemas.ts';
import { makeRecordExecutions } from '../core/use-cases/pipelines.ts';
import { operationHandler } from '../http/operation.ts';
import { nanoidGenerator, systemClock } from '../wiring/clock.ts';
import { pipelineRepositoryFromEnv, teamSettingsStoreFromEnv } from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';

export const recordExecutions = defineOperation({
  name: 'record-executions',
  method: 'POST',
  path: '/pipelines/{pipelineId}/executions',
  summary: `Record up to ${LIMITS.batchSize} executions, all or nothing.`,
  access: { data: 'readWrite' },
  params: { pipelineId: idSchema },
  body: {
    schema: recordExecutionsBodySchema,
    required: true,
    example: {
      executions: [
        {
          status: 'failed',
          durationMs: 1620,
          error: 'retrieval timed out',
          startedAt: '2026-11-20T09:29:58.000Z',
          slotResults: [{ slotId: 'retrieve', status: 'failed', durationMs: 1500, error: 'timeout' }],
        },
      ],
    },
  },
  response: { status: 201, schema: z.object({ executions: z.array(executionSchema) }) },
  errors: [404, 409],
});

export const handler = /* @__PURE__ */ operationHandler(recordExecutions, () => {
  const record = makeRecordExecutions({
    pipelines: pipelineRepositoryFromEnv(),
    clock: systemClock,
    ids: nanoidGenerator,
    settings: teamSettingsStoreFromEnv(),
  });
  return async ({ principal, params, body }) => ({
    body: { executions: await record(principal, params.pipelineId, body.executions) },
  });
});
