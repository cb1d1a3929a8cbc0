/**
 * OTLP spans into executions and signals against the fakes: which spans are refused and why, what
 * is staged and for how long, when a trace becomes an execution (its root arrived), which
 * configuration it ran, and how spans sent again or completed later are recorded once.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { ConflictError, ForbiddenError } from '../../../../lambdas/core/errors.ts';
import type { TraceSpan } from '../../../../lambdas/core/otlp/spans.ts';
import type { ReviseExecution } from '../../../../lambdas/core/ports/traces.ts';
import type { Principal } from '../../../../lambdas/core/principal.ts';
import type { Configuration, Pipeline } from '../../../../lambdas/core/schemas/pipelines.ts';
import type { Execution } from '../../../../lambdas/core/schemas/records.ts';
import {
  type IngestOutcome,
  type IngestTracesDeps,
  makeIngestTraces,
} from '../../../../lambdas/core/use-cases/ingest-traces.ts';
import { makeRecordExecutions, makeRecordSignals } from '../../../../lambdas/core/use-cases/pipelines.ts';
import { span as baseSpan, event, T0 } from '../otlp/trace-spans.ts';
import { makeWorld, principal, rejection, seedPipeline, type World } from './fakes.ts';
import { FakeTraceStaging } from './trace-staging-fake.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const NOW = '2026-01-01T01:00:00.000Z';
const TRACE_A = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const TRACE_B = 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';

let world: World;
let pipeline: Pipeline;
let active: Configuration;
let staging: FakeTraceStaging;
let revisions: Array<{ id: string; spanCount: number; retentionDays: number; rollout: unknown }>;
let executionBatches: number[];
let signalBatches: number[];
let deps: IngestTracesDeps;
const ada = principal();

/** Revises as the store does: replaced only when the new assembly read more spans. */
const revise =
  (into: World): ReviseExecution =>
  async (execution, retentionDays, rollout) => {
    revisions.push({ id: execution.id, spanCount: execution.spanCount, retentionDays, rollout });
    for (const [key, stored] of into.pipelines.executions) {
      const counted = stored as Execution & { spanCount?: number };
      if (stored.id !== execution.id) continue;
      if (counted.spanCount === undefined || stored.source !== 'otlp') return 'foreign';
      if (counted.spanCount >= execution.spanCount) return 'kept';
      into.pipelines.executions.set(key, structuredClone(execution));
      return 'revised';
    }
    return 'kept';
  };

beforeEach(async () => {
  world = makeWorld(NOW);
  ({ pipeline, configuration: active } = await seedPipeline(world));
  staging = new FakeTraceStaging(world.pipelines);
  revisions = [];
  executionBatches = [];
  signalBatches = [];
  const recordExecutions = makeRecordExecutions(world);
  const recordSignals = makeRecordSignals(world);
  deps = {
    pipelines: world.pipelines,
    settings: world.settings,
    traces: staging,
    clock: world.clock,
    recordExecutions: (who, id, inputs) => {
      executionBatches.push(inputs.length);
      return recordExecutions(who, id, inputs);
    },
    recordSignals: (who, id, inputs) => {
      signalBatches.push(inputs.length);
      return recordSignals(who, id, inputs);
    },
    reviseExecution: revise(world),
    redact: (text) => text.replaceAll('sk-secret', '[redacted]'),
  };
});

const span = (traceId: string, spanId: string, fields: Partial<TraceSpan> = {}) =>
  baseSpan(spanId, { traceId, ...fields });
const outcome = (): IngestOutcome => ({ rejected: 0, reasons: new Set() });
const ingest = (spans: TraceSpan[], who: Principal = ada, into = outcome()) =>
  makeIngestTraces(deps)(who, pipeline.id, { spans, bytes: Buffer.byteLength(JSON.stringify(spans)) }, into);

/** A root and a model call that was judged: one execution, one evaluation signal. */
const judgedTrace = (traceId: string, extra: Partial<TraceSpan> = {}) => [
  span(traceId, 'r1', { name: 'summarize', endMs: T0 + 50, attributes: { 'input.value': '"hi sk-secret"' } }),
  span(traceId, 'c1', {
    parentSpanId: 'r1',
    startMs: T0 + 5,
    endMs: T0 + 40,
    attributes: { 'pipeline.slot': 'model', 'gen_ai.usage.input_tokens': 12 },
    events: [
      event('gen_ai.evaluation.result', {
        'gen_ai.evaluation.name': 'Relevance',
        'gen_ai.evaluation.score.value': 0.3,
      }),
    ],
    ...extra,
  }),
];

const executions = () =>
  [...world.pipelines.executions.values()] as Array<Execution & { spanCount?: number }>;
const signals = () => [...world.pipelines.signals.values()];

describe('ingesting a whole trace', () => {
  it('records its execution (the trace id, OTLP, the active configuration) and its signals', async () => {
    const result = await ingest(judgedTrace(TRACE_A));
    expect(result).toEqual({ rejected: 0, reasons: new Set() });
    expect(executions()).toEqual([
      expect.objectContaining({
        id: TRACE_A,
        pipelineId: pipeline.id,
        configurationId: active.id,
        status: 'succeeded',
        startedAt: new Date(T0).toISOString(),
        durationMs: 50,
        source: 'otlp',
        spanCount: 2,
        input: 'hi [redacted]',
      }),
    ]);
    expect(signals()).toEqual([
      expect.objectContaining({
        id: `${TRACE_A}-c1-0`,
        executionId: TRACE_A,
        slotId: 'model',
        kind: 'relevance',
        severity: 'warning',
        value: 0.3,
      }),
    ]);
  });

  it('stages it for a week and assembles it from the request alone (no read of staged spans)', async () => {
    await ingest(judgedTrace(TRACE_A));
    expect(staging.stagings).toEqual([
      {
        parts: [{ traceId: TRACE_A, spans: judgedTrace(TRACE_A), whole: true }],
        expiresAt: new Date(Date.parse(NOW) + 7 * DAY).toISOString(),
      },
    ]);
    expect(staging.reads).toEqual([]);
  });

  it('stages no longer than the team keeps executions', async () => {
    world.settings.byTeam.set('team-a', {
      ...(await world.settings.get('team-a')),
      executionRetentionDays: 2,
    });
    await ingest(judgedTrace(TRACE_A));
    expect(staging.stagings[0]?.expiresAt).toBe(new Date(Date.parse(NOW) + 2 * DAY).toISOString());
  });

  it('counts a span sent twice in one request once, the last one sent', async () => {
    const [root, child] = judgedTrace(TRACE_A) as [TraceSpan, TraceSpan];
    await ingest([root, { ...child, status: 'ok' }, { ...child, status: 'error', statusMessage: 'boom' }]);
    expect(executions()[0]).toMatchObject({
      spanCount: 2,
      slotResults: [{ slotId: 'model', status: 'failed' }],
    });
  });
});

describe('spans that are refused', () => {
  it('counts spans outside 2000-01-01 … 24 h from now, and keeps the others', async () => {
    const into = outcome();
    const early = span(TRACE_B, 'x1', { startMs: Date.parse('1999-12-31T23:59:59Z') });
    const late = span(TRACE_B, 'x2', { endMs: Date.parse(NOW) + 24 * HOUR + 1 });
    const edge = span(TRACE_B, 'x3', { parentSpanId: 'x0', endMs: Date.parse(NOW) + 24 * HOUR });
    await ingest([early, late, edge, ...judgedTrace(TRACE_A)], ada, into);
    expect(into.rejected).toBe(2);
    expect([...into.reasons]).toEqual(['span times must be between 2000-01-01 and 24 h from now']);
    expect(staging.stagings[0]?.parts.map((part) => [part.traceId, part.spans.length, part.whole])).toEqual([
      [TRACE_B, 1, false],
      [TRACE_A, 2, true],
    ]);
    expect(executions().map((execution) => execution.id)).toEqual([TRACE_A]);
  });

  it('counts spans that start before the execution window, and stages nothing when none is left', async () => {
    world.settings.byTeam.set('team-a', {
      ...(await world.settings.get('team-a')),
      executionRetentionDays: 1,
    });
    const into = outcome();
    const old = span(TRACE_A, 'r1', { startMs: Date.parse(NOW) - DAY - 1, endMs: Date.parse(NOW) - DAY });
    const inside = span(TRACE_A, 'r2', { startMs: Date.parse(NOW) - DAY, endMs: Date.parse(NOW) - DAY + 1 });
    await ingest([old], ada, into);
    expect(into).toEqual({
      rejected: 1,
      reasons: new Set(["spans that start before the team's execution retention window are not kept"]),
    });
    expect(staging.stagings).toEqual([]);
    // A span at the earliest time allowed is refused by the window, not by the time bounds.
    const earliest = span(TRACE_B, 'e1', { startMs: Date.parse('2000-01-01T00:00:00Z') });
    await ingest([earliest], ada, into);
    expect([...into.reasons]).toEqual([
      "spans that start before the team's execution retention window are not kept",
    ]);
    await ingest([inside], ada, into);
    expect(into.rejected).toBe(2);
    expect(executions().map((execution) => execution.startedAt)).toEqual([
      new Date(Date.parse(NOW) - DAY).toISOString(),
    ]);
  });

  it('refuses a reader, and a pipeline of another team, before anything is staged', async () => {
    const viewer = principal({ role: 'viewer' });
    expect(await rejection(ingest(judgedTrace(TRACE_A), viewer))).toBeInstanceOf(ForbiddenError);
    const eve = principal({ userId: 'user-eve', principalId: 'user-eve', teamId: 'team-b' });
    expect(await rejection(ingest(judgedTrace(TRACE_A), eve))).toBeInstanceOf(ForbiddenError);
    expect(staging.stagings).toEqual([]);
    expect(executions()).toEqual([]);
  });
});

describe('a trace that arrives in parts', () => {
  it('waits for its root, then is assembled from every span staged so far', async () => {
    const [root, child] = judgedTrace(TRACE_A) as [TraceSpan, TraceSpan];
    await ingest([child]);
    expect(staging.stagings[0]?.parts[0]?.whole).toBe(false);
    expect(executions()).toEqual([]);
    expect(signals()).toEqual([]);
    await ingest([root]);
    expect(staging.reads).toEqual([TRACE_A, TRACE_A]);
    expect(executions()).toEqual([expect.objectContaining({ id: TRACE_A, spanCount: 2 })]);
    expect(signals().map((signal) => signal.id)).toEqual([`${TRACE_A}-c1-0`]);
  });

  it('reads a whole part again when earlier parts of its trace were staged', async () => {
    const [root, child] = judgedTrace(TRACE_A) as [TraceSpan, TraceSpan];
    await ingest([span(TRACE_A, 'late', { parentSpanId: 'c1', startMs: T0 + 6 })]);
    await ingest([root, child]);
    expect(staging.reads).toEqual([TRACE_A, TRACE_A]);
    expect(executions()).toEqual([expect.objectContaining({ id: TRACE_A, spanCount: 3 })]);
  });

  it('revises the execution when more spans came, and records only the new signals', async () => {
    const [root, child] = judgedTrace(TRACE_A) as [TraceSpan, TraceSpan];
    await ingest([root]);
    expect(executions()).toEqual([expect.objectContaining({ id: TRACE_A, spanCount: 1 })]);
    expect(signals()).toEqual([]);
    await ingest([child]);
    expect(revisions).toEqual([{ id: TRACE_A, spanCount: 2, retentionDays: 90, rollout: null }]);
    expect(executions()).toEqual([
      expect.objectContaining({
        id: TRACE_A,
        spanCount: 2,
        slotResults: [expect.objectContaining({ slotId: 'model' })],
      }),
    ]);
    expect(signals().map((signal) => signal.id)).toEqual([`${TRACE_A}-c1-0`]);
  });

  it('records nothing again when the same spans are sent again (no error, no revision)', async () => {
    await ingest(judgedTrace(TRACE_A));
    const before = { executions: executions(), signals: signals() };
    await ingest(judgedTrace(TRACE_A));
    expect(revisions).toEqual([{ id: TRACE_A, spanCount: 2, retentionDays: 90, rollout: null }]);
    expect({ executions: executions(), signals: signals() }).toEqual(before);
    // The signals go beside the batch: refused as recorded already (the batch, then each), never stored twice.
    expect(signalBatches).toEqual([1, 1, 1]);
  });

  it('records the new traces of a batch in which some were recorded already', async () => {
    await ingest(judgedTrace(TRACE_A));
    await ingest([...judgedTrace(TRACE_A), ...judgedTrace(TRACE_B)]);
    expect(
      executions()
        .map((execution) => execution.id)
        .sort(),
    ).toEqual([TRACE_A, TRACE_B]);
    expect(
      signals()
        .map((signal) => signal.id)
        .sort(),
    ).toEqual([`${TRACE_A}-c1-0`, `${TRACE_B}-c1-0`]);
    // The batch of two was refused, then each trace was tried alone.
    expect(executionBatches).toEqual([1, 2, 1, 1]);
  });

  it('keeps each signal not recorded yet when a batch of them is refused', async () => {
    const first = judgedTrace(TRACE_A);
    await ingest(first);
    // Its execution now reads more spans: revised, so its signals are sent again with a new one.
    const second = span(TRACE_A, 'c2', {
      parentSpanId: 'r1',
      attributes: { 'pipeline.slot': 'prompt' },
      events: [
        event('gen_ai.evaluation.result', {
          'gen_ai.evaluation.name': 'tone',
          'gen_ai.evaluation.score.label': 'good',
        }),
      ],
    });
    await ingest([second]);
    expect(signalBatches).toEqual([1, 2, 1, 1]);
    expect(
      signals()
        .map((signal) => [signal.id, signal.severity])
        .sort(),
    ).toEqual([
      [`${TRACE_A}-c1-0`, 'warning'],
      [`${TRACE_A}-c2-0`, 'info'],
    ]);
  });
});

describe('the configuration a trace ran', () => {
  it('is the one it names, else the active one when it names none that exists or no valid id', async () => {
    const other: Configuration = { ...active, id: 'cfg-named', version: 2 };
    world.pipelines.seedConfiguration(other);
    const naming = (traceId: string, id: string) => [
      span(traceId, 'r1', { attributes: { 'pipeline.configuration_id': id } }),
    ];
    await ingest([
      ...naming(TRACE_A, 'cfg-named'),
      ...naming(TRACE_B, 'cfg-missing'),
      ...naming('cccccccccccccccccccccccccccccccc', 'not/an id'),
    ]);
    expect(
      Object.fromEntries(executions().map((execution) => [execution.id, execution.configurationId])),
    ).toEqual({
      [TRACE_A]: 'cfg-named',
      [TRACE_B]: active.id,
      cccccccccccccccccccccccccccccccc: active.id,
    });
  });

  it('reads each configuration once a request', async () => {
    const reads: string[] = [];
    const getConfiguration = world.pipelines.getConfiguration.bind(world.pipelines);
    world.pipelines.getConfiguration = (pipelineId, id) => {
      reads.push(id);
      return getConfiguration(pipelineId, id);
    };
    await ingest([...judgedTrace(TRACE_A), ...judgedTrace(TRACE_B)]);
    expect(reads).toEqual([active.id]);
  });

  it('leaves a trace unrecorded while the pipeline has no configuration to read', async () => {
    world.pipelines.configurations.clear();
    await ingest(judgedTrace(TRACE_A));
    expect(staging.stagings).toHaveLength(1);
    expect(executions()).toEqual([]);
    expect(executionBatches).toEqual([]);
  });
});

describe('recording many traces and signals', () => {
  it('records executions and signals in batches of at most 100', async () => {
    const traceIds = Array.from({ length: 101 }, (_, index) => index.toString(16).padStart(32, '0'));
    await ingest(traceIds.flatMap((traceId) => judgedTrace(traceId)));
    expect(executionBatches).toEqual([100, 1]);
    expect(signalBatches).toEqual([100, 1]);
    expect(executions()).toHaveLength(101);
    expect(signals()).toHaveLength(101);
  });

  it("keeps signals older than the team's signal window out", async () => {
    world.settings.byTeam.set('team-a', { ...(await world.settings.get('team-a')), signalRetentionDays: 1 });
    world.clock.set(new Date(T0 + 2 * DAY).toISOString());
    await ingest(judgedTrace(TRACE_A));
    expect(executions()).toHaveLength(1);
    expect(signals()).toEqual([]);
    expect(signalBatches).toEqual([]);
  });

  it('fails the request on an error recording executions that is not a conflict', async () => {
    deps.recordExecutions = async () => {
      throw new Error('store unavailable');
    };
    expect((await rejection(ingest(judgedTrace(TRACE_A)))).message).toBe('store unavailable');
    deps.recordExecutions = async (_who, _id, inputs) => {
      throw inputs.length > 1 ? new ConflictError('some are recorded') : new Error('store unavailable');
    };
    const both = [...judgedTrace(TRACE_A), ...judgedTrace(TRACE_B)];
    expect((await rejection(ingest(both))).message).toBe('store unavailable');
  });

  it('fails the request on an error recording signals that is not a conflict', async () => {
    const evaluation = (name: string) =>
      event('gen_ai.evaluation.result', { 'gen_ai.evaluation.name': name });
    const twoSignals = judgedTrace(TRACE_A, { events: [evaluation('tone'), evaluation('facts')] });
    deps.recordSignals = async () => {
      throw new Error('signals unavailable');
    };
    expect((await rejection(ingest(twoSignals))).message).toBe('signals unavailable');
    deps.recordSignals = async (_who, _id, inputs) => {
      throw inputs.length > 1 ? new ConflictError('some are recorded') : new Error('signals unavailable');
    };
    const twoMore = judgedTrace(TRACE_B, { events: [evaluation('tone'), evaluation('facts')] });
    expect((await rejection(ingest(twoMore))).message).toBe('signals unavailable');
  });
});
