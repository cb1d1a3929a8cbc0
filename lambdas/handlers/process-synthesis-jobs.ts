/* The synthesis worker (SQS consumer): composes the handler registry (heuristic-v1, claude-v1),
   the stores and the queue, and generates each job's run with its fault classification. */
import type { SQSRecord } from 'aws-lambda';
import { SynthesisFailure } from '../core/errors.ts';
import { settleModelSpend } from '../core/model-budget.ts';
import type { SynthesisEngine } from '../core/ports/synthesis.ts';
import { makeGenerateRun } from '../core/use-cases/generation.ts';
import { WORKER_TIMEOUT_SECONDS } from '../functions.ts';
import { logger } from '../observability/logger.ts';
import { countMetric, METRIC, recordRunFigures } from '../observability/metrics.ts';
import type { QueueUrlVariable } from '../queues.ts';
import { queueUrl } from '../sqs/queue-url.ts';
import { RetryLater, sqsJobHandler } from '../sqs/sqs-batch.ts';
import { heuristicV1 } from '../synthesis/heuristic/engine.ts';
import { nanoidGenerator, systemClock } from '../wiring/clock.ts';
import { readConfig } from '../wiring/config.ts';
import { isTransientFault } from '../wiring/faults.ts';
import { modelPricesFromEnv } from '../wiring/model-prices.ts';
import {
  evaluationStoreFromEnv,
  evidenceStoreFromEnv,
  modelSpendStoreFromEnv,
  pipelineReadsFromEnv,
  runRepositoryFromEnv,
  teamSettingsStoreFromEnv,
} from '../wiring/repositories.ts';

/** Its queue's URL (lambdas/queues.ts), to hide a job that will be retried. */
const URL_VARIABLE = 'SYNTHESIS_QUEUE_URL' satisfies QueueUrlVariable;
const config = readConfig({ [URL_VARIABLE]: queueUrl });

let claudeV1: Promise<SynthesisEngine> | undefined;

/**
 * claude-v1, loaded the first time a job names it: the Anthropic SDK, Secrets Manager and its
 * settings live in a part of their own (claude-v1.mjs next to the bundle, lib/bundling.ts), so a
 * cold start and heuristic-v1 jobs never load them. Once loaded, its client and cached key serve
 * every warm invocation; a failed load is not kept, so the next job tries again.
 */
function loadClaudeV1(): Promise<SynthesisEngine> {
  claudeV1 ??= import('../wiring/claude-v1.ts').then(
    (part) => part.createClaudeV1FromEnv((message, details) => logger.info(message, details)),
    (error: unknown) => {
      claudeV1 = undefined;
      throw new SynthesisFailure(
        'claude-v1 could not be loaded in this worker (its module claude-v1.mjs is missing from the ' +
          "function's package or failed to start; the worker's log has the cause). Redeploy the worker, " +
          'or start the run with synthesisHandler "heuristic-v1".',
        { cause: error },
      );
    },
  );
  return claudeV1;
}

let visibilityChanger: Promise<(record: SQSRecord, seconds: number) => Promise<void>> | undefined;

/**
 * ChangeMessageVisibility for a job that will be retried, with the SQS client loaded and built by
 * the first such job (sqs-queue.mjs, a part of its own like claude-v1.mjs): a job that ends, and
 * the worker's cold start, never pay for it. A failed load is not kept; sqsJobHandler logs the
 * failure and the message then waits out the queue's visibility timeout.
 */
function changeVisibility(record: SQSRecord, seconds: number): Promise<void> {
  visibilityChanger ??= import('../sqs/sqs-queue.ts').then(
    (part) => part.makeVisibilityChanger(part.getSqsClient(), config[URL_VARIABLE]),
    (error: unknown) => {
      visibilityChanger = undefined;
      throw error;
    },
  );
  return visibilityChanger.then((change) => change(record, seconds));
}

// The handler registry, built once per container. Only this Lambda imports the engines, which
// keeps the Anthropic SDK out of the HTTP Lambdas' bundles.
const engines: Record<string, SynthesisEngine> = {
  'heuristic-v1': heuristicV1,
  'claude-v1': {
    name: 'claude-v1',
    generate: async (context) => (await loadClaudeV1()).generate(context),
  },
};

const generateRun = makeGenerateRun({
  runs: runRepositoryFromEnv(),
  pipelines: pipelineReadsFromEnv(),
  evidence: evidenceStoreFromEnv(),
  evaluations: evaluationStoreFromEnv(),
  engines,
  clock: systemClock,
  ids: nanoidGenerator,
  // A claim older than one worker timeout belongs to an invocation that can no longer be running.
  leaseMs: WORKER_TIMEOUT_SECONDS * 1000,
  isTransient: isTransientFault,
  prices: modelPricesFromEnv(),
  settings: teamSettingsStoreFromEnv(),
});

const spend = modelSpendStoreFromEnv();

/** The synthesis worker: one SQS record per job, partial batch failures, backoff in seconds. */
export const handler = sqsJobHandler(
  async (job, record) => {
    const outcome = await generateRun(job);
    const receiveCount = Number(record.attributes.ApproximateReceiveCount) || 1;
    const ids = {
      runId: job.runId,
      jobId: job.jobId,
      pipelineId: 'run' in outcome ? outcome.run?.pipelineId : undefined,
      synthesisHandler: 'run' in outcome ? outcome.run?.synthesisHandler : undefined,
      receiveCount,
    };
    switch (outcome.outcome) {
      case 'generated':
        await settleModelSpend(spend, outcome.run);
        countMetric(METRIC.runsGenerated, { synthesisHandler: outcome.run.synthesisHandler });
        recordRunFigures(outcome.run);
        logger.info('synthesis run generated', ids);
        return;
      case 'skipped':
        logger.info('synthesis job skipped', { ...ids, reason: outcome.reason });
        return;
      case 'failed':
        // Permanent: the run is failed and the job is done (the message is deleted).
        logger.error('synthesis run failed', {
          ...ids,
          errorClass: outcome.error.name,
          errorMessage: outcome.run.errorMessage ?? outcome.error.message,
        });
        countMetric(METRIC.jobErrors);
        countMetric(METRIC.runsFailed, {
          synthesisHandler: outcome.run.synthesisHandler,
          errorClass: outcome.error.name,
        });
        recordRunFigures(outcome.run);
        await settleModelSpend(spend, outcome.run);
        return;
      case 'retry':
        throw new RetryLater(outcome.error.message, outcome.retryAfterSeconds, ids, { cause: outcome.error });
    }
  },
  {
    what: 'synthesis job',
    changeVisibility,
  },
);
