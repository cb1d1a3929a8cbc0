import { beforeEach, describe, expect, it } from 'vitest';
import type { MonitorRecord } from '../../../../lambdas/core/schemas/monitors.ts';
import type { Execution, Signal } from '../../../../lambdas/core/schemas/records.ts';
import { bucketOf } from '../../../../lambdas/core/series.ts';
import {
  judgeMonitor,
  makeJudgeMonitors,
  measure,
  stateOf,
  windowOf,
} from '../../../../lambdas/core/use-cases/monitor-judge.ts';
import { makeCreateMonitor } from '../../../../lambdas/core/use-cases/monitors.ts';
import { makeWorld, principal, seedPipeline, type World } from './fakes.ts';
import { FakeMonitorRepository, FakeSeries } from './monitor-fakes.ts';

const T0 = '2026-12-03T10:00:30.000Z';
const APP = 'https://app.example.com/app';

let world: World;
let monitors: FakeMonitorRepository;
let series: FakeSeries;
let pipelineId: string;
let configurationId: string;
let sequence = 0;

beforeEach(async () => {
  world = makeWorld(T0);
  monitors = new FakeMonitorRepository();
  series = new FakeSeries();
  const seeded = await seedPipeline(world);
  pipelineId = seeded.pipeline.id;
  configurationId = seeded.configuration.id;
});

const create = (body: Parameters<ReturnType<typeof makeCreateMonitor>>[2]) =>
  makeCreateMonitor({ pipelines: world.pipelines, monitors, clock: world.clock, ids: world.ids })(
    principal(),
    pipelineId,
    body,
  );

const judge = () =>
  makeJudgeMonitors({ monitors, pipelines: world.pipelines, series, clock: world.clock, appUrl: APP })();

/** `count` executions started now, `failed` of them failed, each `durationMs` long. */
function executions(count: number, failed: number, durationMs = 100, tokens = 0): Execution[] {
  const startedAt = world.clock.now().toISOString();
  return Array.from({ length: count }, (_, index) => ({
    id: `exe-${++sequence}`,
    pipelineId,
    configurationId,
    status: index < failed ? 'failed' : 'succeeded',
    durationMs,
    startedAt,
    slotResults: [
      { slotId: 'model', status: 'succeeded', durationMs, inputTokens: tokens, outputTokens: tokens },
    ],
  })) as Execution[];
}

function scores(kind: string, values: number[]): Signal[] {
  const occurredAt = world.clock.now().toISOString();
  return values.map((value) => ({
    id: `sig-${++sequence}`,
    pipelineId,
    kind,
    severity: 'info',
    message: 'score',
    value,
    occurredAt,
  }));
}

const failureMonitor = {
  name: 'Failures over 10 %',
  metric: 'failure_rate',
  comparator: 'above',
  threshold: 0.1,
  windowMinutes: 5,
  minExecutions: 10,
} as const;

describe('a monitor judged minute after minute', () => {
  it('stays silent into ok, alerts when failures pass the threshold, resolves when they fall back, and says no_data when the window empties', async () => {
    const monitor = await create(failureMonitor);
    expect(monitor).toMatchObject({ state: 'no_data', lastValue: null, judgedAt: null });

    // Healthy traffic: the first judgement moves to ok without announcing anything.
    series.record(pipelineId, { executions: executions(20, 1) });
    await judge();
    expect(await monitors.get(pipelineId, monitor.id)).toMatchObject({ state: 'ok', lastValue: 0.05 });
    expect(monitors.events).toEqual([]);

    // A minute later a burst of failures: 9 of 40 in the window.
    world.clock.advance(60_000);
    series.record(pipelineId, { executions: executions(20, 8) });
    await judge();
    const alerted = await monitors.get(pipelineId, monitor.id);
    expect(alerted).toMatchObject({
      state: 'alert',
      lastValue: 0.225,
      since: world.clock.now().toISOString(),
    });
    expect(monitors.events.map((event) => event.type)).toEqual(['monitor.alerted']);
    expect(monitors.events[0]?.data).toMatchObject({
      teamId: 'team-a',
      pipelineId,
      monitorId: monitor.id,
      status: 'alert',
      previousStatus: 'ok',
      value: 0.225,
      monitor: { id: monitor.id, name: 'Failures over 10 %', threshold: 0.1, comparator: 'above' },
      link: `${APP}/pipelines/${pipelineId}#monitors`,
      actor: { userId: 'system', credential: 'system' },
    });

    // Still failing a minute later: the same state, no second event, `since` kept.
    world.clock.advance(60_000);
    await judge();
    expect(monitors.events).toHaveLength(1);
    expect((await monitors.get(pipelineId, monitor.id))?.since).toBe(alerted?.since);

    // Plenty of healthy executions dilute the failures under 10 %: resolved.
    world.clock.advance(60_000);
    series.record(pipelineId, { executions: executions(100, 0) });
    await judge();
    expect(monitors.events.map((event) => event.type)).toEqual(['monitor.alerted', 'monitor.resolved']);
    expect(monitors.events[1]?.data).toMatchObject({
      status: 'ok',
      previousStatus: 'alert',
      value: 0.064286,
    });

    // Five minutes without traffic: the window holds nothing.
    world.clock.advance(5 * 60_000);
    await judge();
    expect(monitors.events.map((event) => event.type)).toEqual([
      'monitor.alerted',
      'monitor.resolved',
      'monitor.no_data',
    ]);
    expect(await monitors.get(pipelineId, monitor.id)).toMatchObject({ state: 'no_data', lastValue: null });
  });

  it('gives each change of state an id of its own, the same however often it is written', async () => {
    const monitor = await create({ ...failureMonitor, minExecutions: 1 });
    series.record(pipelineId, { executions: executions(4, 4) });
    await judge();
    world.clock.advance(5 * 60_000);
    await judge();
    const [first, second] = monitors.events;
    expect(first?.id).toBe(`evt_${monitor.id}-1_monitor_alerted`);
    expect(second?.id).toBe(`evt_${monitor.id}-2_monitor_no_data`);
  });

  it('announces a change once when two judges judge the same state at the same time', async () => {
    await create({ ...failureMonitor, minExecutions: 1 });
    series.record(pipelineId, { executions: executions(10, 10) });
    // The second judge reads the monitor while the first is about to write.
    let second: Promise<unknown> | undefined;
    monitors.beforeWrite = async () => {
      monitors.beforeWrite = undefined;
      second = judge();
      await second;
    };
    const first = await judge();
    const other = (await second) as Awaited<ReturnType<typeof judge>>;
    expect(monitors.events.map((event) => event.type)).toEqual(['monitor.alerted']);
    expect(first.changed.length + other.changed.length).toBe(1);
    expect(first.stale + other.stale).toBe(1);
  });

  it('does not judge the monitors of a deleted pipeline', async () => {
    await create({ ...failureMonitor, minExecutions: 1 });
    series.record(pipelineId, { executions: executions(10, 10) });
    const outcome = await makeJudgeMonitors({
      monitors,
      pipelines: { getPipeline: async () => null },
      series,
      clock: world.clock,
      appUrl: APP,
    })();
    expect(outcome).toMatchObject({ judged: 0, skipped: 1 });
    expect(monitors.events).toEqual([]);
  });

  it('reads the window that ends with the minute in progress', async () => {
    await create({ ...failureMonitor, windowMinutes: 15 });
    await judge();
    expect(series.windows).toEqual([
      {
        pipelineId,
        from: Date.parse('2026-12-03T09:46:00.000Z'),
        to: Date.parse('2026-12-03T10:01:00.000Z'),
      },
    ]);
    expect(windowOf({ windowMinutes: 5 }, new Date('2026-12-03T10:00:00.000Z'))).toEqual({
      from: Date.parse('2026-12-03T09:56:00.000Z'),
      to: Date.parse('2026-12-03T10:01:00.000Z'),
    });
  });
});

describe('what a monitor measures', () => {
  const bucket = () => {
    const counters = new Map<string, number>();
    return bucketOf('2026-12-03T10:00:00.000Z', counters);
  };

  it('takes each metric from the merged bucket', () => {
    const merged = {
      ...bucket(),
      executions: 4,
      failed: 1,
      failureRate: 0.25,
      durationMs: { mean: 150, p50: 120, p95: 480, p99: 490 },
      tokens: { input: 300, output: 100 },
      scores: { helpfulness: { count: 3, mean: 0.7 } },
    };
    const of = (metric: MonitorRecord['metric'], kind: string | null = null) =>
      measure({ metric, kind }, merged);
    expect(of('failure_rate')).toEqual({ value: 0.25, samples: 4 });
    expect(of('duration_p95')).toEqual({ value: 480, samples: 4 });
    expect(of('duration_mean')).toEqual({ value: 150, samples: 4 });
    expect(of('tokens_mean')).toEqual({ value: 100, samples: 4 });
    expect(of('signal_mean', 'helpfulness')).toEqual({ value: 0.7, samples: 3 });
    expect(of('signal_mean', 'toxicity')).toEqual({ value: null, samples: 0 });
    expect(of('executions').value).toBe(4);
  });

  it('is no_data below minExecutions, and alerts above or below the threshold as asked', () => {
    const rule = { comparator: 'above', threshold: 0.1, minExecutions: 10 } as const;
    expect(stateOf(rule, { value: 0.5, samples: 9 })).toBe('no_data');
    expect(stateOf(rule, { value: null, samples: 50 })).toBe('no_data');
    expect(stateOf(rule, { value: 0.5, samples: 10 })).toBe('alert');
    expect(stateOf(rule, { value: 0.1, samples: 10 })).toBe('ok');
    expect(stateOf({ ...rule, comparator: 'below' }, { value: 0.05, samples: 10 })).toBe('alert');
  });

  it('alerts on silence for "executions below", where an empty window is a value of 0', async () => {
    await create({
      name: 'Traffic stopped',
      metric: 'executions',
      comparator: 'below',
      threshold: 1,
      windowMinutes: 5,
    });
    await judge();
    expect(monitors.events.map((event) => event.type)).toEqual(['monitor.alerted']);
    expect(monitors.events[0]?.data.value).toBe(0);
  });

  it('judges a score kind by its signals: their mean, and their count against minExecutions', async () => {
    const monitor = await create({
      name: 'Helpfulness low',
      metric: 'signal_mean',
      kind: 'helpfulness',
      comparator: 'below',
      threshold: 0.5,
      windowMinutes: 5,
      minExecutions: 3,
    });
    series.record(pipelineId, { signals: scores('helpfulness', [0.2, 0.4]) });
    await judge();
    expect((await monitors.get(pipelineId, monitor.id))?.state).toBe('no_data');
    series.record(pipelineId, { signals: scores('helpfulness', [0.3]) });
    await judge();
    expect(await monitors.get(pipelineId, monitor.id)).toMatchObject({ state: 'alert', lastValue: 0.3 });
  });

  it('measures tokens per execution and the p95 duration from the histograms', async () => {
    const monitor = await create({ ...failureMonitor, metric: 'tokens_mean', threshold: 10 });
    series.record(pipelineId, { executions: [...executions(10, 0, 100, 5), ...executions(10, 0, 1000, 15)] });
    const merged = await series.window(pipelineId, 0, Date.parse('2030-01-01T00:00:00Z'));
    const judged = judgeMonitor(
      { ...monitor, teamId: 'team-a', stateSeq: 0 },
      merged,
      world.clock.now(),
      APP,
    );
    expect(judged.judgement).toMatchObject({ state: 'alert', lastValue: 20 });
    expect(merged.durationMs.p95).toBeGreaterThan(980);
    expect(merged.durationMs.p95).toBeLessThan(1020);
  });
});
