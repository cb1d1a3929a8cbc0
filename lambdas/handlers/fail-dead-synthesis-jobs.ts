/*
 * The consumer of the synthesis dead-letter queue: a run whose job died is marked failed,
 * saying why, instead of staying pending.
 */
import { makeFailDeadJob } from '../core/use-cases/generation.ts';
import { MAX_RECEIVE_COUNT } from '../functions.ts';
import { logger } from '../observability/logger.ts';
import { countMetric, METRIC } from '../observability/metrics.ts';
import { sqsJobHandler } from '../sqs/sqs-batch.ts';
import { systemClock } from '../wiring/clock.ts';
import { modelSpendStoreFromEnv, runRepositoryFromEnv } from '../wiring/repositories.ts';

const failDeadJob = makeFailDeadJob({
  runs: runRepositoryFromEnv(),
  clock: systemClock,
  spend: modelSpendStoreFromEnv(),
});

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
