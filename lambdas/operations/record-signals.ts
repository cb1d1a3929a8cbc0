/* POST /pipelines/{pipelineId}/signals {signals}: records a batch, all or nothing. */
import * as z from 'zod/mini';
import { idSchema, LIMITS } from '../core/schemas/common.ts';
import { recordSignalsBodySchema, signalSchema } from '../core/schemas/records.ts';
import { makeRecordSignals } from '../core/use-cases/pipelines.ts';
import { operationHandler } from '../http/operation.ts';
import { guardrailsFromEnv } from '../sqs/guardrail-sender.ts';
import { nanoidGenerator, systemClock } from '../wiring/clock.ts';
import { pipelineRepositoryFromEnv, teamSettingsStoreFromEnv } from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';

export const recordSignals = defineOperation({
  name: 'record-signals',
  method: 'POST',
  path: '/pipelines/{pipelineId}/signals',
  summary: `Record up to ${LIMITS.batchSize} signals, all or nothing.`,
  // A batch of scores an active rollout guards asks for a judgement, as executions do.
  access: { data: 'readWrite', send: ['guardrail-checks'] },
  params: { pipelineId: idSchema },
  body: {
    schema: recordSignalsBodySchema,
    required: true,
    example: {
      signals: [
        {
          kind: 'timeout',
          severity: 'critical',
          message: 'Retrieval timed out after 1500 ms',
          slotId: 'retrieve',
          occurredAt: '2026-11-20T09:30:00.000Z',
        },
      ],
    },
  },
  response: { status: 201, schema: z.object({ signals: z.array(signalSchema) }) },
  errors: [404, 409],
});

export const handler = /* @__PURE__ */ operationHandler(recordSignals, () => {
  const record = makeRecordSignals({
    pipelines: pipelineRepositoryFromEnv(),
    clock: systemClock,
    ids: nanoidGenerator,
    settings: teamSettingsStoreFromEnv(),
    guardrails: guardrailsFromEnv(),
  });
  return async ({ principal, params, body }) => ({
    body: { signals: await record(principal, params.pipelineId, body.signals) },
  });
});
