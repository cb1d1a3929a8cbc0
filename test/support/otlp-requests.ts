/*
 * OTLP trace requests written by the OpenTelemetry SDK itself: spans made with its tracer and
 * serialized by its own OTLP serializers (protobuf and JSON), as its exporters put them on the wire.
 */
import { gzipSync } from 'node:zlib';
import { type Attributes, context, type Span, SpanStatusCode, trace } from '@opentelemetry/api';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';

export interface SpanPlan {
  name: string;
  parent?: Span;
  attributes?: Attributes;
  /** Milliseconds since the epoch. */
  start: number;
  end: number;
  error?: string;
  events?: Array<{ name: string; attributes: Attributes }>;
}

/** A tracer whose ended spans are kept, in the order they ended. */
export function recordingTracer() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const tracer = provider.getTracer('otlp-test');
  const open = (plan: SpanPlan): Span => {
    const parentContext = plan.parent ? trace.setSpan(context.active(), plan.parent) : context.active();
    const span = tracer.startSpan(
      plan.name,
      { startTime: plan.start, ...(plan.attributes ? { attributes: plan.attributes } : {}) },
      parentContext,
    );
    for (const event of plan.events ?? []) span.addEvent(event.name, event.attributes, plan.start);
    if (plan.error) span.setStatus({ code: SpanStatusCode.ERROR, message: plan.error });
    return span;
  };
  return {
    open,
    close: (span: Span, plan: Pick<SpanPlan, 'end'>) => span.end(plan.end),
    spans: (): ReadableSpan[] => exporter.getFinishedSpans(),
    reset: () => exporter.reset(),
  };
}

export const protobufBody = (spans: ReadableSpan[]) =>
  Buffer.from(ProtobufTraceSerializer.serializeRequest(spans) ?? new Uint8Array());
export const jsonBody = (spans: ReadableSpan[]) =>
  Buffer.from(JsonTraceSerializer.serializeRequest(spans) ?? new Uint8Array());
export const gzip = (body: Buffer) => gzipSync(body);
