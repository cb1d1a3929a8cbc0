/*
 * A pipeline over time (GET /pipelines/{pipelineId}/metrics): its buckets for a range and step,
 * optionally a series per configuration, and the moments that changed what it served, named.
 */

import { ANNOTATED } from '../annotations.ts';
import { ValidationError } from '../errors.ts';
import { nameEventResources } from '../event-names.ts';
import type { DomainEvent } from '../events.ts';
import { RETENTION_DAYS, type TeamSettingsStore } from '../lifecycle.ts';
import { nameEvents } from '../people.ts';
import type { Clock } from '../ports/common.ts';
import type { PeopleDirectory } from '../ports/people.ts';
import type { PipelineReads } from '../ports/pipelines.ts';
import type { PipelineMoments, SeriesReadStats, SeriesReads } from '../ports/series.ts';
import type { Principal } from '../principal.ts';
import { MAX_FUTURE_SKEW_MS } from '../schemas/common.ts';
import { type Annotation, MAX_BUCKETS, type MetricsAnswer } from '../schemas/metrics.ts';
import { STEP_MS, type Step } from '../series.ts';
import { loadOwnedPipeline } from './pipelines.ts';

/** At most this many annotations an answer (the newest are kept past it). */
export const MAX_ANNOTATIONS = 200;

export interface MetricsDeps {
  pipelines: PipelineReads;
  settings: TeamSettingsStore;
  series: SeriesReads;
  moments: PipelineMoments;
  people: PeopleDirectory;
  clock: Clock;
}

export interface MetricsQuery {
  from?: string | undefined;
  to?: string | undefined;
  step?: Step | undefined;
  groupBy?: 'configuration' | undefined;
}

const DAY_MS = 86_400_000;

function labelOf(event: DomainEvent, version: number | undefined): string {
  const v = version === undefined ? 'a configuration' : `version ${version}`;
  switch (event.type) {
    case 'configuration.activated':
      return `Activated ${v}`;
    case 'rollout.started':
      return event.data.percent === undefined
        ? `Rollout of ${v} started`
        : `Rollout of ${v} started at ${event.data.percent} %`;
    case 'rollout.stepped':
      return `Rollout of ${v} moved to ${event.data.percent ?? '?'} %`;
    case 'rollout.promoted':
      return `Rollout of ${v} promoted`;
    default:
      return `Rollout of ${v} rolled back${event.data.reason ? `: ${event.data.reason}` : ''}`;
  }
}

/** The range asked for, aligned to the step, checked against the limits and the retention window. */
export function metricsRange(query: MetricsQuery, now: number, retentionDays: number) {
  const step = query.step ?? 'hour';
  const size = STEP_MS[step];
  const toMs = query.to === undefined ? now : Date.parse(query.to);
  const fromMs = query.from === undefined ? toMs - DAY_MS : Date.parse(query.from);
  if (fromMs >= toMs) {
    throw new ValidationError(
      `from (${new Date(fromMs).toISOString()}) must be before to (${new Date(toMs).toISOString()}).`,
    );
  }
  if (toMs > now + MAX_FUTURE_SKEW_MS) {
    throw new ValidationError('to may be at most 24 hours ahead of now: nothing is recorded later.');
  }
  const oldest = now - retentionDays * DAY_MS;
  if (fromMs < oldest) {
    throw new ValidationError(
      `from is outside the team's retention of ${retentionDays} days: the oldest allowed is ${new Date(oldest).toISOString()}.`,
      { details: { retentionDays, oldestAllowed: new Date(oldest).toISOString() } },
    );
  }
  const to = Math.ceil(toMs / size) * size;
  // A span of at most 1,440 steps that falls between bucket starts would round out to 1,441: it
  // starts at its first whole bucket instead (the last 24 hours by the minute, asked at any second).
  const from =
    toMs - fromMs <= MAX_BUCKETS * size
      ? Math.max(Math.floor(fromMs / size) * size, to - MAX_BUCKETS * size)
      : Math.floor(fromMs / size) * size;
  const buckets = (to - from) / size;
  if (buckets > MAX_BUCKETS) {
    throw new ValidationError(
      `The range holds ${buckets} ${step} buckets; an answer holds at most ${MAX_BUCKETS}: narrow from–to or use a longer step.`,
      { details: { buckets, maxBuckets: MAX_BUCKETS } },
    );
  }
  return { step, from, to };
}

export function makeGetMetrics(deps: MetricsDeps) {
  return async (
    principal: Principal,
    pipelineId: string,
    query: MetricsQuery,
    stats?: SeriesReadStats,
  ): Promise<MetricsAnswer> => {
    const now = deps.clock.now().getTime();
    // Every limit but the team's retention first (a 400 before any read).
    const { step, from, to } = metricsRange(query, now, RETENTION_DAYS.max);
    // Every team keeps at least a day: a range of the last day (the default) needs no settings read.
    const recent = from >= now - RETENTION_DAYS.min * DAY_MS;
    const byConfiguration = query.groupBy === 'configuration';
    const fromIso = new Date(from).toISOString();
    const toIso = new Date(to).toISOString();
    // All at once: the pipeline (whose team is checked before anything is answered), the caller's
    // team's settings, the series and the caller's team's events of the pipeline (another team's
    // pipeline has none there). A refused request has read for nothing, never answered with it.
    const [pipeline, settings, read, moments] = await Promise.all([
      loadOwnedPipeline(deps.pipelines, principal, pipelineId),
      recent ? null : deps.settings.get(principal.teamId),
      // Packs made by this read are kept the default window (a copy: made again once gone).
      deps.series.read(
        { pipelineId, from, to, step, byConfiguration, retentionDays: RETENTION_DAYS.default },
        stats,
      ),
      deps.moments.list(principal.teamId, pipelineId, fromIso, toIso, MAX_ANNOTATIONS),
    ]);
    if (settings) {
      metricsRange(query, now, Math.max(settings.signalRetentionDays, settings.executionRetentionDays));
    }
    const named = await nameEventResources(
      deps.pipelines,
      await nameEvents(deps.people, pipeline.teamId, moments),
    );
    const annotations: Annotation[] = named.flatMap((event) => {
      const type = ANNOTATED[event.type];
      if (!type || !event.data.configurationId) return [];
      const version = event.data.configurationVersion;
      const actor = event.data.actor;
      return [
        {
          at: event.timestamp,
          type,
          configurationId: event.data.configurationId,
          version: version ?? 0,
          ...(actor.credential === 'system' ? {} : { by: actor.tokenId ?? actor.userId }),
          ...(actor.name ? { byName: actor.name } : {}),
          label: labelOf(event, version),
        },
      ];
    });
    return {
      step,
      from: fromIso,
      to: toIso,
      series: [
        { buckets: read.all },
        ...[...read.byConfiguration].map(([configurationId, buckets]) => ({ configurationId, buckets })),
      ],
      annotations,
    };
  };
}
