/*
 * POST /pipelines/{pipelineId}/synthesize: starts a synthesis run and queues its job,
 * idempotently and within the team's hourly quota.
 */
import * as z from 'zod/mini';
import { idSchema } from '../core/schemas/common.ts';
import { idempotencyKeySchema, synthesisRunSchema, synthesizeBodySchema } from '../core/schemas/runs.ts';
import { defaultSynthesisHandler } from '../core/synthesis-handlers.ts';
import { makeStartSynthesis } from '../core/use-cases/synthesis.ts';
import { operationHandler } from '../http/operation.ts';
import { locationOf } from '../http/response.ts';
import { limitsFrom } from '../limits.ts';
import { countMetric, METRIC } from '../observability/metrics.ts';
import { getSqsClient, makeSqsJobQueue, queueUrl } from '../sqs/sqs-queue.ts';
import { nanoidGenerator, systemClock } from '../wiring/clock.ts';
import { readConfig } from '../wiring/config.ts';
import { costEstimatorFromEnv } from '../wiring/cost-estimator.ts';
import {
  idempotencyStoreFromEnv,
  modelSpendStoreFromEnv,
  pipelineReadsFromEnv,
  quotaStoreFromEnv,
  runRepositoryFromEnv,
  teamSettingsStoreFromEnv,
} from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';

export const synthesizePipeline = defineOperation({
  name: 'synthesize-pipeline',
  method: 'POST',
  path: '/pipelines/{pipelineId}/synthesize',
  summary:
    'Start a synthesis run (asynchronous): answers the pending run and its Location; honours Idempotency-Key. ' +
    "With parentRunId, a refinement that learns from its parent's evaluation. A run whose estimated model cost " +
    "would pass the team's modelBudgetUsdPerMonth is a 429.",
  // data: idempotency keys and the team's quota counter are written there.
  access: {
    runs: 'readWrite',
    data: 'readWrite',
    send: ['synthesis-jobs'],
    startsRuns: true,
    events: 'readWrite',
  },
  params: { pipelineId: idSchema },
  headers: {
    'idempotency-key': {
      schema: z.optional(idempotencyKeySchema),
      description:
        'Repeating a request with the same key (within 24 hours, same pipeline and body) answers the same run.',
      invalid: 'The Idempotency-Key header must be 1-255 printable ASCII characters.',
      documented: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7E]+$' },
    },
  },
  body: { schema: synthesizeBodySchema, required: false, example: { synthesisHandler: 'heuristic-v1' } },
  response: {
    status: 202,
    schema: synthesisRunSchema,
    headers: { Location: { type: 'string', description: 'The URL of the run to poll.' } },
  },
  errors: [400, 404, 409, 429, 503],
});

export const handler = /* @__PURE__ */ operationHandler(synthesizePipeline, () => {
  const config = readConfig({
    SYNTHESIS_QUEUE_URL: queueUrl,
    DEFAULT_SYNTHESIS_HANDLER: z.optional(z.string().check(z.minLength(1))),
    // Read only to know whether a key is configured; the key itself is used by the worker alone.
    ANTHROPIC_API_KEY: z.optional(z.string()),
    ANTHROPIC_SECRET_ARN: z.optional(z.string()),
    SYNTHESIS_RUNS_PER_TEAM_PER_HOUR: z.optional(z.string()),
  });
  const limits = limitsFrom((name) =>
    name === 'SYNTHESIS_RUNS_PER_TEAM_PER_HOUR' ? config.SYNTHESIS_RUNS_PER_TEAM_PER_HOUR : undefined,
  );
  const startSynthesis = makeStartSynthesis({
    runs: runRepositoryFromEnv(),
    pipelines: pipelineReadsFromEnv(),
    queue: makeSqsJobQueue(getSqsClient(), config.SYNTHESIS_QUEUE_URL),
    clock: systemClock,
    ids: nanoidGenerator,
    idempotency: idempotencyStoreFromEnv(),
    quota: { store: quotaStoreFromEnv(), runsPerTeamPerHour: limits.synthesisRunsPerTeamPerHour },
    defaultHandler: config.DEFAULT_SYNTHESIS_HANDLER ?? defaultSynthesisHandler(config),
    onStarted: (run) => countMetric(METRIC.runsStarted, { synthesisHandler: run.synthesisHandler }),
    budget: {
      estimator: costEstimatorFromEnv(),
      spend: modelSpendStoreFromEnv(),
      settings: teamSettingsStoreFromEnv(),
      clock: systemClock,
    },
  });
  // A repeat with the same Idempotency-Key and body answers the same run without a second job.
  return async ({ principal, params, headers, body, event }) => {
    const run = await startSynthesis(principal, params.pipelineId, body, headers['idempotency-key']);
    return { body: run, headers: { location: locationOf(event, `/synthesis-runs/${run.id}`) } };
  };
});
