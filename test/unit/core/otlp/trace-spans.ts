/*
 * Spans and configurations for the unit tests of the OTLP mapping: a span with nothing but what a
 * test names, times in milliseconds from 2026-01-01.
 */
import type { AssembleContext } from '../../../../lambdas/core/otlp/assemble.ts';
import type { SpanEvent, TraceSpan } from '../../../../lambdas/core/otlp/spans.ts';
import type { Configuration } from '../../../../lambdas/core/schemas/pipelines.ts';

export const TRACE = '0af7651916cd43dd8448eb211c80319c';
export const T0 = Date.parse('2026-01-01T00:00:00.000Z');

export const span = (spanId: string, fields: Partial<TraceSpan> = {}): TraceSpan => ({
  traceId: TRACE,
  spanId,
  name: `span ${spanId}`,
  startMs: T0,
  endMs: T0 + 10,
  status: 'unset',
  attributes: {},
  events: [],
  ...fields,
});

export const event = (name: string, attributes: SpanEvent['attributes'] = {}, atMs = T0): SpanEvent => ({
  name,
  atMs,
  attributes,
});

export const configuration = (slots: Array<{ id: string; model?: string }>, id = 'cfg-1'): Configuration => ({
  id,
  pipelineId: 'pipe-1',
  version: 1,
  slots: slots.map((slot) => ({
    id: slot.id,
    name: slot.id,
    kind: 'llm',
    settings: slot.model === undefined ? {} : { model: slot.model },
  })),
  source: 'manual',
  createdAt: '2026-01-01T00:00:00.000Z',
  createdBy: 'user-1',
});

export const context = (
  config: Configuration,
  redact: (text: string) => string = (text) => text,
): AssembleContext => ({ traceId: TRACE, pipelineId: 'pipe-1', configuration: config, redact });
