/*
 * A span as the ingest reads it, whatever its encoding (OTLP protobuf or JSON): ids in lower-case
 * hex, times in milliseconds, and only the attributes and events the mapping reads (the table in
 * docs/opentelemetry.md); everything else a span carries is dropped when it is decoded.
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

/** The attributes the mapping reads (legacy OpenLLMetry and OpenInference names included). */
export const READ_ATTRIBUTES: ReadonlySet<string> = new Set([
  'pipeline.slot',
  'pipeline.configuration_id',
  'gen_ai.operation.name',
  'gen_ai.request.model',
  'gen_ai.response.model',
  'gen_ai.system',
  'gen_ai.provider.name',
  'gen_ai.usage.input_tokens',
  'gen_ai.usage.output_tokens',
  'gen_ai.usage.prompt_tokens',
  'gen_ai.usage.completion_tokens',
  'gen_ai.prompt.0.content',
  'gen_ai.prompt.0.role',
  'llm.model_name',
  'llm.token_count.prompt',
  'llm.token_count.completion',
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
/** Most spans read from one request; the rest are refused in the partial success. */
export const SPANS_PER_REQUEST = 10_000;
