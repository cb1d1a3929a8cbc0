import { makeFailDeadJob } from '../core/use-cases/synthesis.ts';
import { systemClock } from '../platform/clock.ts';
import { logger } from '../platform/logger.ts';
import { runRepositoryFromEnv } from '../platform/repositories.ts';
import { sqsJobHandler } from '../platform/sqs-batch.ts';

const failDeadJob = makeFailDeadJob({ runs: runRepositoryFromEnv(), clock: systemClock });

/** Consumes the DLQ: a run whose job died is marked failed instead of staying pending forever. */
export const handler = sqsJobHandler(async (job) => {
  const failed = await failDeadJob(job);
  logger.warn('dead synthesis job', { runId: job.runId, jobId: job.jobId, markedFailed: failed });
});
