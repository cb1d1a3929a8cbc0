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
 * The record's signal in the trace's execution: the slot of the span it names when that span is
 * among `spans` (`slotOf`), the execution alone otherwise.
 */
export function evaluationSignalOf(
  record: EvaluationRecord,
  slotOf: (span: TraceSpan) => string | undefined,
  spans: readonly TraceSpan[],
): TraceSignal {
  const span = record.spanId === undefined ? undefined : spans.find((one) => one.spanId === record.spanId);
  const slotId = span ? slotOf(span) : undefined;
  return {
    id: `${record.traceId}-log-${record.id}`,
    executionId: record.traceId,
    ...(slotId ? { slotId } : {}),
    ...evaluationOf({ name: EVALUATION_EVENT, atMs: record.atMs, attributes: record.attributes }),
  };
}

/** Why the record's signal would be refused by POST …/signals (score, time, text), or undefined. */
export const evaluationRecordIssue = (record: EvaluationRecord) =>
  signalIssue(evaluationSignalOf(record, () => undefined, []));
