/*
 * The monitors' judge, run every minute (handlers/judge-monitors.ts): each monitor's trailing
 * window read as one merged bucket (SeriesReads.window), its value compared with the threshold,
 * and a change of state written with its event (monitor.alerted / resolved / no_data), conditioned
 * on the state the judge read so that two judges never both announce one change.
 */
import { type DomainEvent, type EventType, newEvent, SYSTEM_ACTOR } from '../events.ts';
import type { Clock } from '../ports/common.ts';
import type { Judgement, MonitorRepository } from '../ports/monitors.ts';
import type { PipelineReads } from '../ports/pipelines.ts';
import type { SeriesReads } from '../ports/series.ts';
import type { MonitorRecord, MonitorState } from '../schemas/monitors.ts';
import type { Bucket } from '../series.ts';

const MINUTE_MS = 60_000;
/** Monitors read from the index per page, and judged at once. */
export const JUDGE_PAGE = 100;
export const JUDGE_CONCURRENCY = 10;

/** The monitor's window ending with the minute in progress: its windowMinutes minutes, in ms. */
export function windowOf(
  monitor: Pick<MonitorRecord, 'windowMinutes'>,
  now: Date,
): { from: number; to: number } {
  const to = Math.floor(now.getTime() / MINUTE_MS) * MINUTE_MS + MINUTE_MS;
  return { from: to - monitor.windowMinutes * MINUTE_MS, to };
}

/** The metric's value over the window, and how many samples it is made of; null value: none to judge. */
export function measure(
  monitor: Pick<MonitorRecord, 'metric' | 'kind'>,
  bucket: Bucket,
): { value: number | null; samples: number } {
  const executions = bucket.executions;
  switch (monitor.metric) {
    case 'failure_rate':
      return { value: bucket.failureRate, samples: executions };
    case 'duration_p95':
      return { value: bucket.durationMs.p95, samples: executions };
    case 'duration_mean':
      return { value: bucket.durationMs.mean, samples: executions };
    case 'tokens_mean':
      return {
        value: executions > 0 ? (bucket.tokens.input + bucket.tokens.output) / executions : null,
        samples: executions,
      };
    case 'signal_mean': {
      const score = monitor.kind === null ? undefined : bucket.scores[monitor.kind];
      return { value: score?.mean ?? null, samples: score?.count ?? 0 };
    }
    case 'executions':
      // A count is always a value (0 is one: "fewer than 10 executions" alerts on silence).
      return { value: executions, samples: Number.POSITIVE_INFINITY };
  }
}

/** The state a measure puts the monitor in. */
export function stateOf(
  monitor: Pick<MonitorRecord, 'comparator' | 'threshold' | 'minExecutions'>,
  { value, samples }: { value: number | null; samples: number },
): MonitorState {
  if (value === null || samples < monitor.minExecutions) return 'no_data';
  const breached = monitor.comparator === 'above' ? value > monitor.threshold : value < monitor.threshold;
  return breached ? 'alert' : 'ok';
}

const EVENT_OF: Record<MonitorState, EventType> = {
  alert: 'monitor.alerted',
  ok: 'monitor.resolved',
  no_data: 'monitor.no_data',
};

/** A change of state's event: the monitor, the value, the state before and the app's page of the pipeline. */
export function monitorEvent(
  monitor: MonitorRecord,
  judgement: Judgement,
  previous: MonitorState,
  appUrl: string,
): DomainEvent {
  return newEvent(
    EVENT_OF[judgement.state],
    {
      teamId: monitor.teamId,
      pipelineId: monitor.pipelineId,
      monitorId: monitor.id,
      status: judgement.state,
      previousStatus: previous,
      value: judgement.lastValue,
      monitor: {
        id: monitor.id,
        name: monitor.name,
        metric: monitor.metric,
        kind: monitor.kind,
        comparator: monitor.comparator,
        threshold: monitor.threshold,
        windowMinutes: monitor.windowMinutes,
        minExecutions: monitor.minExecutions,
      },
      link: `${appUrl.replace(/\/+$/, '')}/pipelines/${encodeURIComponent(monitor.pipelineId)}#monitors`,
      actor: SYSTEM_ACTOR,
    },
    // The n-th change of this monitor: a retried write keeps the event's id.
    { at: judgement.judgedAt, key: `${monitor.id}-${monitor.stateSeq + 1}` },
  );
}

/**
 * The judgement of one monitor and the event it announces, if any. A monitor not judged yet starts
 * in no_data; its first judgement into ok announces nothing (nothing was resolved).
 */
export function judgeMonitor(
  monitor: MonitorRecord,
  bucket: Bucket,
  now: Date,
  appUrl: string,
): { judgement: Judgement; event: DomainEvent | null } {
  const measured = measure(monitor, bucket);
  const state = stateOf(monitor, measured);
  const judgedAt = now.toISOString();
  const changed = state !== monitor.state;
  const judgement: Judgement = {
    state,
    since: changed ? judgedAt : monitor.since,
    lastValue: measured.value === null ? null : Number(measured.value.toFixed(6)),
    judgedAt,
  };
  const firstOk = monitor.judgedAt === null && state === 'ok';
  return {
    judgement,
    event: changed && !firstOk ? monitorEvent(monitor, judgement, monitor.state, appUrl) : null,
  };
}

export interface JudgeMonitorsDeps {
  monitors: Pick<MonitorRepository, 'listAll' | 'recordJudgement'>;
  pipelines: Pick<PipelineReads, 'getPipeline'>;
  series: Pick<SeriesReads, 'window'>;
  clock: Clock;
  /** The review app's base URL (…/app): the events link to the pipeline's page. */
  appUrl: string;
}

export interface JudgeOutcome {
  judged: number;
  changed: DomainEvent[];
  /** Another judge (or a change) came first: nothing written for these. */
  stale: number;
  /** Monitors of deleted pipelines, not judged (the deletion removes them). */
  skipped: number;
}

/** Runs `work` over `items`, at most `limit` at once. */
async function eachLimited<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await work(items[next++] as T);
  });
  await Promise.all(lanes);
}

/** Judges every monitor once: the scheduled pass. */
export function makeJudgeMonitors(deps: JudgeMonitorsDeps) {
  return async (): Promise<JudgeOutcome> => {
    const now = deps.clock.now();
    const outcome: JudgeOutcome = { judged: 0, changed: [], stale: 0, skipped: 0 };
    const pipelineAlive = new Map<string, Promise<boolean>>();
    const alive = (pipelineId: string) => {
      let known = pipelineAlive.get(pipelineId);
      if (!known) {
        known = deps.pipelines.getPipeline(pipelineId).then((pipeline) => pipeline !== null);
        pipelineAlive.set(pipelineId, known);
      }
      return known;
    };
    let cursor: string | null = null;
    do {
      const page = await deps.monitors.listAll(cursor, JUDGE_PAGE);
      cursor = page.cursor;
      await eachLimited(page.items, JUDGE_CONCURRENCY, async (monitor) => {
        if (!(await alive(monitor.pipelineId))) {
          outcome.skipped++;
          return;
        }
        const { from, to } = windowOf(monitor, now);
        const bucket = await deps.series.window(monitor.pipelineId, from, to);
        const { judgement, event } = judgeMonitor(monitor, bucket, now, deps.appUrl);
        const written = await deps.monitors.recordJudgement(monitor, judgement, event);
        outcome.judged++;
        if (written === 'stale') outcome.stale++;
        else if (event) outcome.changed.push(event);
      });
    } while (cursor !== null);
    return outcome;
  };
}
