/*
 * A trace's spans into the execution and the signals they record (the mapping of
 * docs/opentelemetry.md): pure, so the same spans always give the same records, whatever order
 * or how many times they arrived.
 */
import type { Configuration, Slot } from '../schemas/pipelines.ts';
import type { ExecutionInput, Severity, SignalInput } from '../schemas/records.ts';
import { type Attributes, type SpanEvent, TOKEN_FIGURES, type TokenFigure, type TraceSpan } from './spans.ts';

/** An execution as the ingest records it: its id is the trace id, its source OTLP. */
export type TraceExecution = ExecutionInput & { id: string; configurationId: string; startedAt: string };
export type TraceSignal = SignalInput & { id: string; occurredAt: string };

export interface AssembledTrace {
  execution: TraceExecution;
  signals: TraceSignal[];
}

const MESSAGE = 2000;
const DAY_MS = 86_400_000;

/** The trace's root: its span without a parent (the earliest, then the lowest id, if several). */
export function rootOf(spans: readonly TraceSpan[]): TraceSpan | undefined {
  let root: TraceSpan | undefined;
  for (const span of spans) {
    if (span.parentSpanId !== undefined) continue;
    if (
      !root ||
      span.startMs < root.startMs ||
      (span.startMs === root.startMs && span.spanId < root.spanId)
    ) {
      root = span;
    }
  }
  return root;
}

/** Spans by start time, then id: the order every "first" of the mapping is read in. */
export const inOrder = (spans: readonly TraceSpan[]) =>
  [...spans].sort((a, b) => a.startMs - b.startMs || (a.spanId < b.spanId ? -1 : 1));

/**
 * The configuration the trace says it ran: a `feature_flag.evaluation` event (or span) whose key is
 * the pipeline's id names it in its variant, or the attribute `pipeline.configuration_id` does.
 */
export function configurationIdOf(spans: readonly TraceSpan[], pipelineId: string): string | undefined {
  for (const span of inOrder(spans)) {
    const flags = [
      ...span.events.filter((event) => event.name === 'feature_flag.evaluation'),
      ...(span.name === 'feature_flag.evaluation' ? [span] : []),
    ];
    for (const flag of flags) {
      if (flag.attributes['feature_flag.key'] !== pipelineId) continue;
      const variant =
        flag.attributes['feature_flag.result.variant'] ?? flag.attributes['feature_flag.variant'];
      if (typeof variant === 'string' && variant !== '') return variant;
    }
    const named = span.attributes['pipeline.configuration_id'];
    if (typeof named === 'string' && named !== '') return named;
  }
  return undefined;
}

const isGenAi = (attributes: Attributes) =>
  attributes['gen_ai.operation.name'] !== undefined ||
  attributes['gen_ai.system'] !== undefined ||
  attributes['gen_ai.provider.name'] !== undefined ||
  attributes['llm.model_name'] !== undefined ||
  attributes['openinference.span.kind'] === 'LLM';

const modelOf = (attributes: Attributes) =>
  attributes['gen_ai.request.model'] ?? attributes['llm.model_name'] ?? attributes['gen_ai.response.model'];

/** Which slot each span belongs to (its own or its nearest ancestor's name, else its model's slot). */
export function slotsOf(spans: readonly TraceSpan[], slots: readonly Slot[]): Map<TraceSpan, string> {
  const ids = new Set(slots.map((slot) => slot.id));
  const byId = new Map(spans.map((span) => [span.spanId, span]));
  const named = (span: TraceSpan) => {
    const attribute = span.attributes['pipeline.slot'];
    if (typeof attribute === 'string' && ids.has(attribute)) return attribute;
    return ids.has(span.name) ? span.name : undefined;
  };
  const result = new Map<TraceSpan, string>();
  for (const span of spans) {
    let slot: string | undefined;
    const seen = new Set<string>();
    for (let at: TraceSpan | undefined = span; at && !seen.has(at.spanId); ) {
      seen.add(at.spanId);
      slot = named(at);
      if (slot) break;
      at = at.parentSpanId ? byId.get(at.parentSpanId) : undefined;
    }
    if (!slot && isGenAi(span.attributes)) {
      const model = modelOf(span.attributes);
      const matching = slots.filter((candidate) => model !== undefined && candidate.settings.model === model);
      if (matching.length === 1) slot = matching[0]?.id;
    }
    if (slot) result.set(span, slot);
  }
  return result;
}

const cut = (text: string) => (text.length > MESSAGE ? `${text.slice(0, MESSAGE - 1)}…` : text);
const iso = (ms: number) => new Date(Math.floor(ms)).toISOString();
const duration = (from: number, to: number) => Math.min(DAY_MS, Math.max(0, Math.round(to - from)));

/** What went wrong in a failed span, from `error.type`, its status message and its exception. */
export function errorOf(span: TraceSpan): string | undefined {
  const exception = span.events.find((event) => event.name === 'exception');
  const type = span.attributes['error.type'] ?? exception?.attributes['exception.type'];
  const message = span.statusMessage ?? exception?.attributes['exception.message'];
  const parts = [type, message].filter((part) => part !== undefined && part !== '').map(String);
  return parts.length > 0 ? cut([...new Set(parts)].join(': ')) : undefined;
}

const numberOf = (attributes: Attributes, ...names: readonly string[]) => {
  for (const name of names) {
    const value = attributes[name];
    if (typeof value === 'number') return value;
  }
  return 0;
};

function slotResultsOf(
  spans: readonly TraceSpan[],
  configuration: Configuration,
  bySlot: Map<TraceSpan, string>,
) {
  const results: NonNullable<ExecutionInput['slotResults']> = [];
  for (const slot of configuration.slots) {
    const own = spans.filter((span) => bySlot.get(span) === slot.id);
    if (own.length === 0) continue;
    const ids = new Set(own.map((span) => span.spanId));
    const outermost = own.filter((span) => !span.parentSpanId || !ids.has(span.parentSpanId));
    const failed = inOrder(outermost).find((span) => span.status === 'error');
    const tokens: Partial<Record<TokenFigure, number>> = {};
    for (const figure of Object.keys(TOKEN_FIGURES) as TokenFigure[]) {
      const sum = own.reduce((total, span) => total + numberOf(span.attributes, ...TOKEN_FIGURES[figure]), 0);
      if (sum > 0) tokens[figure] = Math.round(sum);
    }
    const error = failed ? errorOf(failed) : undefined;
    results.push({
      slotId: slot.id,
      status: failed ? 'failed' : 'succeeded',
      durationMs: duration(Math.min(...own.map((s) => s.startMs)), Math.max(...own.map((s) => s.endMs))),
      ...(error ? { error } : {}),
      ...tokens,
    });
  }
  return results;
}

/** The replay input: the root's `input.value`, else the first GenAI span's `gen_ai.input.messages`. */
function inputOf(root: TraceSpan, spans: readonly TraceSpan[], redact: (text: string) => string) {
  const first = inOrder(spans).find((span) => span.attributes['gen_ai.input.messages'] !== undefined);
  const raw = root.attributes['input.value'] ?? first?.attributes['gen_ai.input.messages'];
  if (typeof raw !== 'string') return undefined;
  const text = redact(raw);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

export interface AssembleContext {
  traceId: string;
  pipelineId: string;
  /** The configuration that ran (configurationIdOf, else the active one). */
  configuration: Configuration;
  redact: (text: string) => string;
}

/** The execution and signals of a trace whose root has arrived (with whatever spans came so far). */
export function assembleTrace(
  spans: readonly TraceSpan[],
  root: TraceSpan,
  context: AssembleContext,
): AssembledTrace {
  const bySlot = slotsOf(spans, context.configuration.slots);
  const slotResults = slotResultsOf(spans, context.configuration, bySlot);
  const error = root.status === 'error' ? errorOf(root) : undefined;
  const input = inputOf(root, spans, context.redact);
  const execution: TraceExecution = {
    id: context.traceId,
    configurationId: context.configuration.id,
    status: root.status === 'error' ? 'failed' : 'succeeded',
    durationMs: duration(root.startMs, root.endMs),
    startedAt: iso(root.startMs),
    ...(error ? { error } : {}),
    ...(slotResults.length > 0 ? { slotResults } : {}),
    ...(input !== undefined ? { input } : {}),
  };
  return { execution, signals: signalsOf(spans, bySlot, context) };
}

function signalsOf(spans: readonly TraceSpan[], bySlot: Map<TraceSpan, string>, context: AssembleContext) {
  const signals: TraceSignal[] = [];
  const byId = new Map(spans.map((span) => [span.spanId, span]));
  for (const span of spans) {
    const slotId = bySlot.get(span);
    const cites = { executionId: context.traceId, ...(slotId ? { slotId } : {}) };
    span.events.forEach((event, index) => {
      if (event.name !== 'gen_ai.evaluation.result') return;
      signals.push({ id: `${context.traceId}-${span.spanId}-${index}`, ...cites, ...evaluationOf(event) });
    });
    const parent = span.parentSpanId ? byId.get(span.parentSpanId) : undefined;
    const outermost = slotId !== undefined && (!parent || bySlot.get(parent) !== slotId);
    if (outermost && span.status === 'error') {
      signals.push({
        id: `${context.traceId}-${span.spanId}-error`,
        ...cites,
        kind: 'error',
        severity: 'critical',
        message: cut(`Slot ${slotId} failed: ${errorOf(span) ?? 'its span ended with status ERROR'}`),
        occurredAt: iso(span.endMs),
      });
    }
  }
  return signals;
}

const FAILING_LABEL =
  /^(fail(ed|ing)?|bad|incorrect|wrong|negative|toxic|unsafe|irrelevant|hallucinated|no|false)$/i;
const PASSING_LABEL = /^(pass(ed|ing)?|good|correct|right|positive|safe|relevant|yes|true)$/i;

/** An evaluation event's signal: its name as the kind, its score as the value, severity as documented. */
export function evaluationOf(event: SpanEvent): Omit<TraceSignal, 'id' | 'executionId' | 'slotId'> {
  const name = event.attributes['gen_ai.evaluation.name'];
  const score = event.attributes['gen_ai.evaluation.score.value'];
  const label = event.attributes['gen_ai.evaluation.score.label'];
  const explanation = event.attributes['gen_ai.evaluation.explanation'];
  const kind = kindOf(typeof name === 'string' ? name : 'evaluation');
  const value = typeof score === 'number' ? score : undefined;
  const labelText = typeof label === 'string' ? label : undefined;
  const severity: Severity =
    labelText && FAILING_LABEL.test(labelText)
      ? 'warning'
      : labelText && PASSING_LABEL.test(labelText)
        ? 'info'
        : value !== undefined && value < 0.5
          ? 'warning'
          : 'info';
  const summary = [`${kind}`, labelText, value !== undefined ? `score ${value}` : undefined]
    .filter(Boolean)
    .join(' ');
  return {
    kind,
    severity,
    message: cut(
      typeof explanation === 'string' && explanation !== '' ? `${summary}: ${explanation}` : summary,
    ),
    ...(value !== undefined ? { value } : {}),
    occurredAt: iso(event.atMs),
  };
}

/** A signal kind from an evaluation's name: lower case, letters, digits, `_` and `-`. */
export function kindOf(name: string): string {
  const kind = name
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '_')
    .replace(/^[^a-z]+/, '')
    .slice(0, 64);
  return kind === '' ? 'evaluation' : kind;
}
