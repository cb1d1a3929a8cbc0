/*
 * A span as the ingest reads it, whatever its encoding (OTLP protobuf or JSON): ids in lower-case
 * hex, times in milliseconds, and only the attributes and events the mapping reads (the tables of
 * docs/conventions.md); everything else a span carries is dropped when it is decoded.
 */

export type AttributeValue = string | number | boolean | string[];
export type Attributes = Record<string, AttributeValue>;

export interface SpanEvent {
  name: string;
  atMs: number;
  attributes: Attributes;
}

export interface TraceSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  startMs: number;
  endMs: number;
  status: 'unset' | 'ok' | 'error';
  statusMessage?: string;
  attributes: Attributes;
  events: SpanEvent[];
}

/** The input attributes: kept whole when they fit the replay input's limit, else not kept. */
export const INPUT_ATTRIBUTES: ReadonlySet<string> = new Set(['input.value', 'gen_ai.input.messages']);

/**
 * The token figures of a slot's result and the attributes each is read from, first present wins
 * on a span (current GenAI, then the older GenAI and OpenLLMetry names, then OpenInference's; the
 * table of docs/conventions.md). The cache figures are their own, never added to `inputTokens`:
 * whether a span's input count already holds them is the emitter's (docs/decisions.md).
 */
export const TOKEN_FIGURES = {
  inputTokens: ['gen_ai.usage.input_tokens', 'gen_ai.usage.prompt_tokens', 'llm.token_count.prompt'],
  outputTokens: [
    'gen_ai.usage.output_tokens',
    'gen_ai.usage.completion_tokens',
    'llm.token_count.completion',
  ],
  cacheReadInputTokens: [
    'gen_ai.usage.cache_read.input_tokens',
    'gen_ai.usage.cache_read_input_tokens',
    'llm.token_count.prompt_details.cache_read',
  ],
  cacheWriteInputTokens: [
    'gen_ai.usage.cache_write.input_tokens',
    'gen_ai.usage.cache_creation.input_tokens',
    'gen_ai.usage.cache_creation_input_tokens',
    'llm.token_count.prompt_details.cache_write',
  ],
} as const satisfies Record<string, readonly string[]>;
export type TokenFigure = keyof typeof TOKEN_FIGURES;

/** Every token count attribute the mapping reads (each bounded by TOKENS_MAX on arrival). */
export const TOKEN_ATTRIBUTES: readonly string[] = Object.values(TOKEN_FIGURES).flat();
/** Most tokens a span may report, as an execution's slot result may hold (POST …/executions). */
export const TOKENS_MAX = 1_000_000_000;

/** The attributes the mapping reads, by convention in docs/conventions.md (its test keeps them equal). */
export const READ_ATTRIBUTES: ReadonlySet<string> = new Set([
  'pipeline.slot',
  'pipeline.configuration_id',
  'gen_ai.operation.name',
  'gen_ai.request.model',
  'gen_ai.response.model',
  'gen_ai.system',
  'gen_ai.provider.name',
  ...TOKEN_ATTRIBUTES,
  'llm.model_name',
  'openinference.span.kind',
  'error.type',
  'exception.type',
  'exception.message',
  'feature_flag.key',
  'feature_flag.result.variant',
  'feature_flag.variant',
  'gen_ai.evaluation.name',
  'gen_ai.evaluation.score.value',
  'gen_ai.evaluation.score.label',
  'gen_ai.evaluation.explanation',
  ...INPUT_ATTRIBUTES,
]);

/** The events the mapping reads; other events of a span are dropped. */
export const READ_EVENTS: ReadonlySet<string> = new Set([
  'feature_flag.evaluation',
  'gen_ai.evaluation.result',
  'exception',
]);

/** Longest kept text of an attribute that is not an input (a longer one is cut there). */
export const ATTRIBUTE_TEXT_LENGTH = 4096;
/** Most spans of one request: a request with more is refused whole (413), before it is built. */
export const SPANS_PER_REQUEST = 10_000;
/**
 * What one request may store (docs/opentelemetry.md, "Limits"), checked before anything is
 * written: its traces (each one staged item, a mark when partial, an execution), the signals its
 * spans may give, and the bytes of its spans as read (what is staged).
 */
export const WRITE_BOUNDS = { traces: 1_000, signals: 2_000, bytes: 8 * 1024 * 1024 } as const;

const spanTexts = new WeakMap<TraceSpan, string>();
/**
 * A span's JSON, as its size is counted when it is read and as it is staged: written once a span
 * (a span read is never changed afterwards).
 */
export function spanJson(span: TraceSpan): string {
  let text = spanTexts.get(span);
  if (text === undefined) {
    text = JSON.stringify(span);
    spanTexts.set(span, text);
  }
  return text;
}
