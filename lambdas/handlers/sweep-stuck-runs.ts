/*
 * The scheduled sweeper: fails runs left pending or generating longer than any retry of
 * their job takes, and logs each one; and the rollouts' guardrail pass (core/use-cases/guardrails.ts).
 */
import type { ScheduledEvent } from 'aws-lambda';
import { makeSweepStuckRuns } from '../core/use-cases/generation.ts';
import { makeJudgeRollouts } from '../core/use-cases/guardrails.ts';
import { STUCK_RUN_AFTER_SECONDS } from '../functions.ts';
import { logger } from '../observability/logger.ts';
import { countMetric, METRIC } from '../observability/metrics.ts';
import { nanoidGenerator, systemClock } from '../wiring/clock.ts';
import {
  modelSpendStoreFromEnv,
  pipelineReadsFromEnv,
  rolloutRepositoryFromEnv,
  runRepositoryFromEnv,
} from '../wiring/repositories.ts';

const sweep = makeSweepStuckRuns({
  runs: runRepositoryFromEnv(),
  clock: systemClock,
  stuckAfterMs: STUCK_RUN_AFTER_SECONDS * 1000,
  spend: modelSpendStoreFromEnv(),
});

const judgeRollouts = makeJudgeRollouts({
  runs: runRepositoryFromEnv(),
  pipelines: pipelineReadsFromEnv(),
  rollouts: rolloutRepositoryFromEnv(),
  clock: systemClock,
  ids: nanoidGenerator,
});

/** On a schedule: fails runs left pending or generating too long, then judges active rollouts. */
export const handler = async (_event: ScheduledEvent) => {
  const swept = await sweep();
  const judged = await judgeRollouts();
  for (const outcome of judged) {
    if (outcome.action === 'kept') continue;
    logger.info('rollout judged by its guardrail', { ...outcome });
  }
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
  return { swept: swept.length, rolloutsEnded: judged.filter((o) => o.action !== 'kept').length };
};
