/*
 * OTLP log records as the ingest reads them: only evaluation results (event name
 * `gen_ai.evaluation.result`, the successor of the span event of that name), each kept under its
 * trace until the trace's spans come and then a signal exactly as the span event gives. Pure.
 */
import { evaluationOf, type TraceSignal } from './assemble.ts';
import { signalIssue } from './check.ts';
import type { Attributes, TraceSpan } from './spans.ts';

/** The event name of an evaluation result, as a log record's `event_name` or its `event.name`. */
export const EVALUATION_EVENT = 'gen_ai.evaluation.result';

/** The attributes read of a log record: its event name and the evaluation's. */
export const LOG_READ_ATTRIBUTES: ReadonlySet<string> = new Set([
  'event.name',
  'gen_ai.evaluation.name',
  'gen_ai.evaluation.score.value',
  'gen_ai.evaluation.score.label',
  'gen_ai.evaluation.explanation',
]);

/** An evaluation result read from a log record, ids in lower-case hex and its time in milliseconds. */
export interface EvaluationRecord {
  /** The same for the same record sent again (a retry): its signal is recorded once. */
  id: string;
  traceId: string;
  /** The span it evaluates, when the record names one: its signal cites that span's slot. */
  spanId?: string;
  atMs: number;
  attributes: Attributes;
}

/**
 * The signals of the trace's evaluation results whose span has arrived (or that name none): each
 * cites the execution and the slot of its span (`slotOf`). A result naming a span not among
 * `spans` waits for it (its signal could not be given its slot later: a signal never changes).
 */
export function evaluationSignalsOf(
  records: readonly EvaluationRecord[],
  spans: readonly TraceSpan[],
  slotOf: (span: TraceSpan) => string | undefined,
): TraceSignal[] {
  const byId = new Map(spans.map((span) => [span.spanId, span]));
  return records.flatMap((record) => {
    if (record.spanId === undefined) return [evaluationSignalOf(record, undefined)];
    const span = byId.get(record.spanId);
    return span ? [evaluationSignalOf(record, slotOf(span))] : [];
  });
}

/** The record's signal in the trace's execution, in the slot given. */
function evaluationSignalOf(record: EvaluationRecord, slotId: string | undefined): TraceSignal {
  return {
    id: `${record.traceId}-log-${record.id}`,
    executionId: record.traceId,
    ...(slotId ? { slotId } : {}),
    ...evaluationOf({ name: EVALUATION_EVENT, atMs: record.atMs, attributes: record.attributes }),
  };
}

/** Why the record's signal would be refused by POST …/signals (score, time, text), or undefined. */
export const evaluationRecordIssue = (record: EvaluationRecord) =>
  signalIssue(evaluationSignalOf(record, undefined));
