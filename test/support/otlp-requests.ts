/*
 * OTLP trace and log requests written by the OpenTelemetry SDKs themselves: spans made with their
 * tracer, log records emitted through their logger, serialized by their own OTLP serializers
 * (protobuf and JSON), as their exporters put them on the wire.
 */
import { gzipSync } from 'node:zlib';
import { type Attributes, context, type Span, SpanStatusCode, trace } from '@opentelemetry/api';
import type { LogRecord } from '@opentelemetry/api-logs';
import {
  JsonLogsSerializer,
  JsonTraceSerializer,
  ProtobufLogsSerializer,
  ProtobufTraceSerializer,
} from '@opentelemetry/otlp-transformer';
import {
  InMemoryLogRecordExporter,
  LoggerProvider,
  type ReadableLogRecord,
  SimpleLogRecordProcessor,
} from '@opentelemetry/sdk-logs';
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

/**
 * One run of a RAG pipeline as OpenLLMetry-style spans: a root that read configuration `variant`
 * through a feature flag, a retrieval slot span, and a chat span on the answer model (matched by
 * its model) that fails when `failed`, with an evaluation event on the root.
 */
export function run(
  tracer: ReturnType<typeof recordingTracer>,
  pipelineId: string,
  variant: string,
  at: number,
  failed = false,
) {
  const root = tracer.open({
    name: 'answer-question',
    start: at,
    end: at + 900,
    attributes: { 'input.value': '{"question":"what is our refund policy?"}' },
    events: [
      {
        name: 'feature_flag.evaluation',
        attributes: { 'feature_flag.key': pipelineId, 'feature_flag.result.variant': variant },
      },
      {
        name: 'gen_ai.evaluation.result',
        attributes: {
          'gen_ai.evaluation.name': 'Relevance',
          'gen_ai.evaluation.score.value': 0.2,
          'gen_ai.evaluation.score.label': 'irrelevant',
        },
      },
    ],
    ...(failed ? { error: 'the model call failed' } : {}),
  });
  const retrieve = tracer.open({ name: 'retrieve', parent: root, start: at + 10, end: at + 310 });
  tracer.close(retrieve, { end: at + 310 });
  const chat = tracer.open({
    name: 'chat claude-sonnet-4-5',
    parent: root,
    start: at + 320,
    end: at + 880,
    attributes: {
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'claude-sonnet-4-5',
      'gen_ai.usage.input_tokens': 120,
      'gen_ai.usage.output_tokens': 40,
    },
    ...(failed ? { error: 'overloaded_error: Overloaded' } : {}),
  });
  tracer.close(chat, { end: at + 880 });
  tracer.close(root, { end: at + 900 });
  return root.spanContext().traceId;
}

/** Log records emitted through the OpenTelemetry logs SDK, kept as its exporters would get them. */
export function recordingLogger() {
  const exporter = new InMemoryLogRecordExporter();
  const provider = new LoggerProvider({ processors: [new SimpleLogRecordProcessor(exporter)] });
  const logger = provider.getLogger('otlp-test');
  return {
    /** Emits a record in the context of `span` (its trace and span ids), when one is given. */
    emit: (record: Omit<LogRecord, 'context'>, span?: Span) =>
      logger.emit({ ...record, ...(span ? { context: trace.setSpan(context.active(), span) } : {}) }),
    records: (): ReadableLogRecord[] => exporter.getFinishedLogRecords(),
  };
}

export const protobufLogsBody = (records: ReadableLogRecord[]) =>
  Buffer.from(ProtobufLogsSerializer.serializeRequest(records) ?? new Uint8Array());
export const jsonLogsBody = (records: ReadableLogRecord[]) =>
  Buffer.from(JsonLogsSerializer.serializeRequest(records) ?? new Uint8Array());
