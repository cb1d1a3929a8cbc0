/*
 * The scheduled judge of monitors (core/use-cases/monitor-judge.ts): every minute, every monitor's
 * window judged, each change of state written with its event; a count of its completed passes
 * (MonitorJudgeRuns) that the judge's alarm misses when it stops.
 */
import type { ScheduledEvent } from 'aws-lambda';
import * as z from 'zod/mini';
import { makeJudgeMonitors } from '../core/use-cases/monitor-judge.ts';
import { logger } from '../observability/logger.ts';
import { countMetric, METRIC } from '../observability/metrics.ts';
import { systemClock } from '../wiring/clock.ts';
import { readConfig } from '../wiring/config.ts';
import {
  monitorRepositoryFromEnv,
  pipelineReadsFromEnv,
  seriesReadsFromEnv,
} from '../wiring/repositories.ts';

const judge = makeJudgeMonitors({
  monitors: monitorRepositoryFromEnv(),
  pipelines: pipelineReadsFromEnv(),
  series: seriesReadsFromEnv(),
  clock: systemClock,
  appUrl: readConfig({ APP_URL: z.url({ protocol: /^https?$/ }) }).APP_URL,
});

/** On a schedule: judges every monitor once. */
export const handler = async (_event: ScheduledEvent) => {
  const outcome = await judge();
  for (const event of outcome.changed) {
    logger.info('monitor changed state', {
      monitorId: event.data.monitorId,
      pipelineId: event.data.pipelineId,
      teamId: event.data.teamId,
      status: event.data.status,
      previousStatus: event.data.previousStatus,
      value: event.data.value,
    });
  }
  countMetric(METRIC.monitorJudgeRuns);
  if (outcome.judged > 0) countMetric(METRIC.monitorsJudged, {}, outcome.judged);
  if (outcome.changed.length > 0) countMetric(METRIC.monitorStateChanges, {}, outcome.changed.length);
  return {
    judged: outcome.judged,
    changed: outcome.changed.length,
    stale: outcome.stale,
    skipped: outcome.skipped,
  };
};
