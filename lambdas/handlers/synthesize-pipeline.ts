/*
 * Lambda handler of POST /pipelines/{pipelineId}/synthesize: starts a synthesis run and
 * queues its job, idempotently and within the team's hourly quota.
 */
import * as z from 'zod/mini';
import { ValidationError } from '../core/errors.ts';
import { idempotencyKeySchema, idSchema, synthesizeBodySchema } from '../core/schemas.ts';
import { defaultSynthesisHandler } from '../core/synthesis-handlers.ts';
import { makeStartSynthesis } from '../core/use-cases/synthesis.ts';
import { limitsFrom } from '../limits.ts';
import { nanoidGenerator, systemClock } from '../platform/clock.ts';
import { readConfig } from '../platform/config.ts';
import {
  header,
  httpHandler,
  json,
  parseBody,
  pathParam,
  principalOf,
  runLocation,
} from '../platform/http.ts';
import { countMetric, METRIC } from '../platform/metrics.ts';
import {
  idempotencyStoreFromEnv,
  pipelineRepositoryFromEnv,
  quotaStoreFromEnv,
  runRepositoryFromEnv,
} from '../platform/repositories.ts';
import { getSqsClient, makeSqsJobQueue, queueUrl } from '../platform/sqs-queue.ts';

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
  pipelines: pipelineRepositoryFromEnv(),
  queue: makeSqsJobQueue(getSqsClient(), config.SYNTHESIS_QUEUE_URL),
  clock: systemClock,
  ids: nanoidGenerator,
  idempotency: idempotencyStoreFromEnv(),
  quota: { store: quotaStoreFromEnv(), runsPerTeamPerHour: limits.synthesisRunsPerTeamPerHour },
  defaultHandler: config.DEFAULT_SYNTHESIS_HANDLER ?? defaultSynthesisHandler(config),
  onStarted: (run) => countMetric(METRIC.runsStarted, { synthesisHandler: run.synthesisHandler }),
});

function idempotencyKeyOf(event: Parameters<typeof header>[0]): string | undefined {
  const value = header(event, 'idempotency-key');
  if (value === undefined) return undefined;
  const parsed = idempotencyKeySchema.safeParse(value);
  if (!parsed.success)
    throw new ValidationError('The Idempotency-Key header must be 1-255 printable ASCII characters.');
  return parsed.data;
}

/**
 * POST /pipelines/{pipelineId}/synthesize: 202 with the pending run and its Location. A repeat with
 * the same Idempotency-Key and body answers the same run without queueing a second job.
 */
export const handler = httpHandler(async (event) => {
  const principal = principalOf(event);
  const pipelineId = pathParam(event, 'pipelineId', idSchema);
  const body = parseBody(event, synthesizeBodySchema, { optional: true });
  const run = await startSynthesis(principal, pipelineId, body, idempotencyKeyOf(event));
  return json(202, run, { location: runLocation(event, run.id) });
});
