/*
 * The scheduled sweeper: fails runs left pending or generating longer than any retry of
 * their job takes, and logs each one.
 */
import type { ScheduledEvent } from 'aws-lambda';
import { makeSweepStuckRuns } from '../core/use-cases/generation.ts';
import { STUCK_RUN_AFTER_SECONDS } from '../functions.ts';
import { logger } from '../observability/logger.ts';
import { countMetric, METRIC } from '../observability/metrics.ts';
import { systemClock } from '../wiring/clock.ts';
import { runRepositoryFromEnv } from '../wiring/repositories.ts';

const sweep = makeSweepStuckRuns({
  runs: runRepositoryFromEnv(),
  clock: systemClock,
  stuckAfterMs: STUCK_RUN_AFTER_SECONDS * 1000,
});

/** On a schedule: fails runs left pending or generating longer than any retry of their job takes. */
export const handler = async (_event: ScheduledEvent) => {
  const swept = await sweep();
  for (const run of swept) {
    logger.error('synthesis run failed: stuck past its bound', {
      runId: run.id,
      jobId: run.jobId,
      pipelineId: run.pipelineId,
      synthesisHandler: run.synthesisHandler,
      errorMessage: run.errorMessage,
    });
  }
  if (swept.length > 0) countMetric(METRIC.runsSwept, {}, swept.length);
  return { swept: swept.length };
};
