/* POST /pipelines/{pipelineId}/executions {executions}: records a batch, all or nothing. */
import * as z from 'zod/mini';
import { idSchema, LIMITS } from '../core/schemas/common.ts';
import { executionSchema, recordExecutionsBodySchema } from '../core/schemas/records.ts';
import { makeRecordExecutions } from '../core/use-cases/pipelines.ts';
import { operationHandler } from '../http/operation.ts';
import { guardrailsFromEnv } from '../sqs/guardrail-sender.ts';
import { nanoidGenerator, systemClock } from '../wiring/clock.ts';
import { pipelineRepositoryFromEnv, teamSettingsStoreFromEnv } from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';

export const recordExecutions = defineOperation({
  name: 'record-executions',
  method: 'POST',
  path: '/pipelines/{pipelineId}/executions',
  summary: `Record up to ${LIMITS.batchSize} executions, all or nothing.`,
  // A batch of an active rollout's arms asks for the rollout to be judged (the guardrail queue).
  access: { data: 'readWrite', send: ['guardrail-checks'] },
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
    guardrails: guardrailsFromEnv(),
  });
  return async ({ principal, params, body }) => ({
    body: { executions: await record(principal, params.pipelineId, body.executions) },
  });
});
