/* GET /pipelines/{pipelineId}/executions/{executionId}: one execution, its slots and source, and the signals citing it. */
import * as z from 'zod/mini';
import { idSchema } from '../core/schemas/common.ts';
import { executionSchema, signalSchema } from '../core/schemas/records.ts';
import { CITING_SIGNALS, makeGetExecution } from '../core/use-cases/record-reads.ts';
import { operationHandler } from '../http/operation.ts';
import { systemClock } from '../wiring/clock.ts';
import {
  pipelineReadsFromEnv,
  recordReadsFromEnv,
  teamSettingsStoreFromEnv,
} from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';

export const getExecution = defineOperation({
  name: 'get-execution',
  method: 'GET',
  path: '/pipelines/{pipelineId}/executions/{executionId}',
  summary: `One execution with its slot results and source (otlp: assembled from a trace; api), and up to ${CITING_SIGNALS} signals citing it recorded within 7 days of its start, newest first.`,
  access: { data: 'read' },
  params: { pipelineId: idSchema, executionId: idSchema },
  response: {
    status: 200,
    schema: z.object({ execution: executionSchema, signals: z.array(signalSchema) }),
  },
  errors: [404],
});

export const handler = /* @__PURE__ */ operationHandler(getExecution, () => {
  const get = makeGetExecution({
    pipelines: pipelineReadsFromEnv(),
    settings: teamSettingsStoreFromEnv(),
    reads: recordReadsFromEnv(),
    clock: systemClock,
  });
  return async ({ principal, params }) => ({
    body: await get(principal, params.pipelineId, params.executionId),
  });
});
