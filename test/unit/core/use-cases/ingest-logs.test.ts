/**
 * OTLP log records' evaluation results into signals against the fakes: a result for a trace
 * already recorded becomes its signal at once (with the slot of the span it names), one for a
 * trace (or a span) not yet seen waits staged until it comes, and results POST …/signals would
 * refuse are counted refused with the reason, staging nothing.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { EvaluationRecord } from '../../../../lambdas/core/otlp/logs.ts';
import type { TraceSpan } from '../../../../lambdas/core/otlp/spans.ts';
import type { Pipeline } from '../../../../lambdas/core/schemas/pipelines.ts';
import { makeIngestLogs } from '../../../../lambdas/core/use-cases/ingest-logs.ts';
import {
  type IngestOutcome,
  type IngestTracesDeps,
  makeIngestTraces,
} from '../../../../lambdas/core/use-cases/ingest-traces.ts';
import { makeRecordExecutions, makeRecordSignals } from '../../../../lambdas/core/use-cases/pipelines.ts';
import { span as baseSpan, T0 } from '../otlp/trace-spans.ts';
import { makeWorld, principal, seedPipeline, type World } from './fakes.ts';
import { FakeTraceStaging } from './trace-staging-fake.ts';

const NOW = '2026-01-01T01:00:00.000Z';
const TRACE_A = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const ada = principal();

let world: World;
let pipeline: Pipeline;
let staging: FakeTraceStaging;
let deps: IngestTracesDeps;

beforeEach(async () => {
  world = makeWorld(NOW);
  ({ pipeline } = await seedPipeline(world));
  staging = new FakeTraceStaging(world.pipelines);
  deps = {
    pipelines: world.pipelines,
    settings: world.settings,
    traces: staging,
    clock: world.clock,
    recordExecutions: makeRecordExecutions(world),
    recordSignals: makeRecordSignals(world),
    reviseExecution: async () => 'kept',
    redact: (text) => text,
  };
});

const outcome = (): IngestOutcome => ({ rejected: 0, reasons: new Set() });
const ingestLogs = (records: EvaluationRecord[], into = outcome()) =>
  makeIngestLogs(deps)(ada, pipeline.id, records, into);
const ingestSpans = (spans: TraceSpan[]) =>
  makeIngestTraces(deps)(ada, pipeline.id, { spans, bytes: 0 }, outcome());

/** A root and its model call (slot `model`). */
const trace = (traceId: string) => [
  baseSpan('r1', { traceId, endMs: T0 + 50 }),
  baseSpan('c1', { traceId, parentSpanId: 'r1', attributes: { 'pipeline.slot': 'model' } }),
];

const result = (fields: Partial<EvaluationRecord> = {}): EvaluationRecord => ({
  id: '0123456789abcdef',
  traceId: TRACE_A,
  spanId: 'c1',
  atMs: T0 + 60,
  attributes: {
    'gen_ai.evaluation.name': 'Faithfulness',
    'gen_ai.evaluation.score.value': 0.2,
    'gen_ai.evaluation.explanation': 'cites no source',
  },
  ...fields,
});

const signals = () => [...world.pipelines.signals.values()];

describe('an evaluation result sent as a log record', () => {
  it('becomes a signal of its trace’s execution, in the slot of its span, when the trace came first', async () => {
    await ingestSpans(trace(TRACE_A));

    const answered = await ingestLogs([result()]);

    expect(answered).toEqual({ rejected: 0, reasons: new Set() });
    expect(signals()).toEqual([
      expect.objectContaining({
        id: `${TRACE_A}-log-0123456789abcdef`,
        executionId: TRACE_A,
        slotId: 'model',
        kind: 'faithfulness',
        severity: 'warning',
        value: 0.2,
        message: 'faithfulness score 0.2: cites no source',
        occurredAt: new Date(T0 + 60).toISOString(),
      }),
    ]);
  });

  it('waits staged for a trace not yet seen, and becomes its signal when the spans come', async () => {
    await ingestLogs([result()]);
    expect(signals()).toEqual([]);
    expect(staging.partialTraces.has(`${pipeline.id}#${TRACE_A}`)).toBe(true);

    await ingestSpans(trace(TRACE_A));

    expect(signals()).toEqual([
      expect.objectContaining({ executionId: TRACE_A, slotId: 'model', value: 0.2 }),
    ]);
  });

  it('naming a span that has not arrived, waits for it, and is then recorded in that span’s slot', async () => {
    const [root, model] = trace(TRACE_A) as [TraceSpan, TraceSpan];
    await ingestLogs([result()]);
    // The root alone first, as a simple span processor exports each span when it ends.
    await ingestSpans([root]);
    expect(signals()).toEqual([]);

    await ingestSpans([model]);

    expect(signals()).toEqual([expect.objectContaining({ executionId: TRACE_A, slotId: 'model' })]);
  });

  it('cites the execution alone when it names no span, and is recorded once when sent again', async () => {
    await ingestSpans(trace(TRACE_A));
    const unnamed = result({ spanId: undefined });

    await ingestLogs([unnamed]);
    await ingestLogs([unnamed]);

    expect(signals()).toHaveLength(1);
    expect(signals()[0]).toMatchObject({ executionId: TRACE_A });
    expect(signals()[0]).not.toHaveProperty('slotId');
  });

  it('is refused with the reason POST …/signals or the time bounds give, and nothing is staged', async () => {
    const into = outcome();
    const tooLate = result({ id: 'a', atMs: Date.parse(NOW) + 24 * 3_600_000 + 1 });
    const badScore = result({
      id: 'b',
      attributes: { 'gen_ai.evaluation.score.value': 1e200 },
    });

    await ingestLogs([tooLate, badScore], into);

    expect(into.rejected).toBe(2);
    expect([...into.reasons]).toEqual([
      'log record times must be between 2000-01-01 and 24 h from now',
      expect.stringMatching(/^an evaluation result's signal is refused: .*number that cannot be stored/),
    ]);
    expect(staging.stagings).toEqual([]);
  });
});
