/*
 * The consumer of the synthesis dead-letter queue: a run whose job died is marked failed,
 * saying why, instead of staying pending.
 */
import { makeFailDeadJob } from '../core/use-cases/generation.ts';
import { systemClock } from '../platform/clock.ts';
import { logger } from '../platform/logger.ts';
import { countMetric, METRIC } from '../platform/metrics.ts';
import { runRepositoryFromEnv } from '../platform/repositories.ts';
import { sqsJobHandler } from '../platform/sqs-batch.ts';
import { MAX_RECEIVE_COUNT } from '../routes.ts';

const failDeadJob = makeFailDeadJob({ runs: runRepositoryFromEnv(), clock: systemClock });

/** Consumes the DLQ: a run whose job died is marked failed, saying why, instead of staying pending. */
export const handler = sqsJobHandler(
  async (job) => {
    // The receive count a DLQ message carries also counts this receive; the source queue tried it
    // exactly MAX_RECEIVE_COUNT times.
    const failed = await failDeadJob(job, MAX_RECEIVE_COUNT);
    if (!failed) {
      logger.info('dead synthesis job for a finished run', { runId: job.runId, jobId: job.jobId });
      return;
    }
    logger.error('synthesis run failed: its job was dead-lettered', {
      runId: job.runId,
      jobId: job.jobId,
      pipelineId: failed.pipelineId,
      synthesisHandler: failed.synthesisHandler,
      errorMessage: failed.errorMessage,
    });
    countMetric(METRIC.runsFailed, { synthesisHandler: failed.synthesisHandler, errorClass: 'DeadLetter' });
  },
  { what: 'dead synthesis job' },
);
