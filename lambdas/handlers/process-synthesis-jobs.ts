import { makeGenerateRun } from '../core/use-cases/synthesis.ts';
import { nanoidGenerator, systemClock } from '../platform/clock.ts';
import { logger } from '../platform/logger.ts';
import { pipelineRepositoryFromEnv, runRepositoryFromEnv } from '../platform/repositories.ts';
import { sqsJobHandler } from '../platform/sqs-batch.ts';
import { WORKER_TIMEOUT_SECONDS } from '../routes.ts';
import { SYNTHESIS_ENGINES } from '../synthesis/registry.ts';

const generateRun = makeGenerateRun({
  runs: runRepositoryFromEnv(),
  pipelines: pipelineRepositoryFromEnv(),
  engines: SYNTHESIS_ENGINES,
  clock: systemClock,
  ids: nanoidGenerator,
  // A claim older than one worker timeout belongs to an invocation that can no longer be running.
  leaseMs: WORKER_TIMEOUT_SECONDS * 1000,
});

/** The synthesis worker: one SQS record per job, partial batch failures. */
export const handler = sqsJobHandler(async (job, record) => {
  const outcome = await generateRun(job);
  logger.info('synthesis job processed', {
    runId: job.runId,
    jobId: job.jobId,
    outcome,
    receiveCount: record.attributes.ApproximateReceiveCount,
  });
});
