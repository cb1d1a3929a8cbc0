/**
 * OTLP logs end to end: a program's spans exported by the published trace exporter and its
 * evaluation results emitted as log records through the published logs SDK and OTLP log exporter
 * (protobuf, gzip) against the local stack. A result sent after its trace and one sent before it
 * both become signals citing the right execution (and slot); any other log record is reported
 * refused in the partial success; metrics are a 404; bombs sent to …/v1/logs are 413s.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { context, type DiagLogger, DiagLogLevel, diag, type Span, trace } from '@opentelemetry/api';
import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { LoggerProvider, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_SLOTS } from '../../local/seed.ts';
import { type LocalStack, startLocalStack } from '../../local/stack.ts';
import { emptyProtobufLogRecords, jsonLogRequest } from '../support/otlp-bombs.ts';

let stack: LocalStack;
const warnings: string[] = [];

beforeAll(async () => {
  stack = await startLocalStack({
    port: 0,
    quiet: true,
    stateDir: await mkdtemp(path.join(tmpdir(), 'pipeline-synthesis-otel-logs-')),
    log: () => {},
  });
  // The exporters report a partial success through OpenTelemetry's diagnostic logger.
  const keep = (message: string, ...args: unknown[]) => {
    warnings.push([message, ...args].join(' '));
  };
  const logger: DiagLogger = { error: keep, warn: keep, info: () => {}, debug: () => {}, verbose: () => {} };
  diag.setLogger(logger, DiagLogLevel.WARN);
}, 120_000);

afterAll(async () => {
  diag.disable();
  await stack?.stop();
});

/** The exporters' gzip setting (their enum lives in a package this project does not depend on). */
const GZIP = 'gzip' as NonNullable<
  NonNullable<ConstructorParameters<typeof OTLPLogExporter>[0]>['compression']
>;

const token = () => stack.teams[0]?.apiToken ?? '';

async function api(method: string, route: string, body?: unknown) {
  const response = await fetch(`${stack.apiUrl}${route}`, {
    method,
    headers: { authorization: `Bearer ${token()}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: JSON.parse((await response.text()) || 'null') };
}

/** A program's telemetry, as the published SDKs and OTLP exporters send it to a pipeline. */
function telemetryFor(pipelineId: string) {
  const base = `${stack.apiUrl}/pipelines/${pipelineId}/otlp`;
  const headers = { Authorization: `Bearer ${token()}` };
  const tracing = new BasicTracerProvider({
    spanProcessors: [
      new SimpleSpanProcessor(
        new OTLPTraceExporter({ url: `${base}/v1/traces`, headers, compression: GZIP }),
      ),
    ],
  });
  const logging = new LoggerProvider({
    processors: [
      new SimpleLogRecordProcessor(
        new OTLPLogExporter({
          url: `${base}/v1/logs`,
          headers,
          compression: GZIP,
        }),
      ),
    ],
  });
  const tracer = tracing.getTracer('rag');
  const logger = logging.getLogger('evaluator');
  return {
    /** A root span and its model call in the answer-model slot, not yet ended. */
    startTrace() {
      const root = tracer.startSpan('answer-question');
      const model = tracer.startSpan(
        'chat claude-sonnet-4-5',
        { attributes: { 'pipeline.slot': 'answer-model', 'gen_ai.operation.name': 'chat' } },
        trace.setSpan(context.active(), root),
      );
      return { root, model, traceId: root.spanContext().traceId };
    },
    endTrace(spans: { root: Span; model: Span }) {
      spans.model.end();
      spans.root.end();
    },
    /** An evaluation result of the span, as the GenAI conventions now emit it: a log record. */
    evaluate(span: Span, name: string, score: number, label: string) {
      logger.emit({
        eventName: 'gen_ai.evaluation.result',
        context: trace.setSpan(context.active(), span),
        attributes: {
          'gen_ai.evaluation.name': name,
          'gen_ai.evaluation.score.value': score,
          'gen_ai.evaluation.score.label': label,
          'gen_ai.evaluation.explanation': `${name} judged ${label}`,
        },
      });
    },
    log(span: Span, body: string) {
      logger.emit({ body, context: trace.setSpan(context.active(), span) });
    },
    flush: () => Promise.all([tracing.forceFlush(), logging.forceFlush()]),
    shutdown: () => Promise.all([tracing.shutdown(), logging.shutdown()]),
  };
}

async function newPipeline(name: string) {
  const created = await api('POST', '/pipelines', { name, slots: DEMO_SLOTS });
  expect(created.status).toBe(201);
  return created.body as { id: string };
}

const signalsOf = async (pipelineId: string) =>
  (await api('GET', `/pipelines/${pipelineId}/signals?limit=100`)).body.items as Array<
    Record<string, unknown>
  >;

describe('OTLP logs from the published logs SDK and exporter', { timeout: 120_000 }, () => {
  it('turns evaluation results sent after their trace and before it into signals citing the right execution', async () => {
    const pipeline = await newPipeline('evaluated through OTLP logs');
    const telemetry = telemetryFor(pipeline.id);

    // After: the trace is exported, then its evaluation result.
    const first = telemetry.startTrace();
    telemetry.endTrace(first);
    await telemetry.flush();
    telemetry.evaluate(first.model, 'relevance', 0.9, 'relevant');
    await telemetry.flush();

    // Before: the result is exported while its trace is still running, the trace afterwards.
    const second = telemetry.startTrace();
    telemetry.evaluate(second.model, 'relevance', 0.2, 'irrelevant');
    await telemetry.flush();
    const early = await signalsOf(pipeline.id);
    expect(early.filter((signal) => signal.executionId === second.traceId)).toEqual([]);
    expect((await api('GET', `/pipelines/${pipeline.id}/executions/${second.traceId}`)).status).toBe(404);
    telemetry.endTrace(second);
    await telemetry.flush();
    await telemetry.shutdown();

    const signals = await signalsOf(pipeline.id);
    const relevance = signals
      .filter((signal) => signal.kind === 'relevance')
      .map(({ executionId, slotId, severity, value }) => ({ executionId, slotId, severity, value }));
    expect(relevance).toEqual(
      expect.arrayContaining([
        { executionId: first.traceId, slotId: 'answer-model', severity: 'info', value: 0.9 },
        { executionId: second.traceId, slotId: 'answer-model', severity: 'warning', value: 0.2 },
      ]),
    );
    expect(relevance).toHaveLength(2);
    for (const traceId of [first.traceId, second.traceId]) {
      const execution = await api('GET', `/pipelines/${pipeline.id}/executions/${traceId}`);
      expect(execution.status).toBe(200);
      expect(execution.body.execution).toMatchObject({ id: traceId, source: 'otlp' });
    }
    expect(warnings.filter((line) => line.includes('Partial Success'))).toEqual([]);
  });

  it('reports any other log record refused in the partial success, and stores nothing of it', async () => {
    const pipeline = await newPipeline('plain logs');
    const telemetry = telemetryFor(pipeline.id);
    const spans = telemetry.startTrace();
    telemetry.endTrace(spans);
    await telemetry.flush();
    const before = warnings.length;

    telemetry.log(spans.root, 'retrieved 8 documents');
    await telemetry.shutdown();

    const partial = warnings.slice(before).filter((line) => line.includes('Partial Success'));
    expect(partial).toHaveLength(1);
    expect(partial[0]).toMatch(/"rejectedLogRecords":"?1"?/);
    expect(partial[0]).toContain('only gen_ai.evaluation.result log records');
    expect(await signalsOf(pipeline.id)).toEqual([]);
  });

  // An exporter configured for every signal is told, once, which ones are not taken.
  for (const [signal, message] of [
    ['v1/metrics', expect.stringContaining('OTLP metrics are not taken')],
    [
      'v1development/profiles',
      'Nothing here has the signal "v1development/profiles": it is one of v1/traces, v1/logs, v1/metrics.',
    ],
  ] as const) {
    it(`answers …/${signal} with a 404 that says what is taken`, async () => {
      const pipeline = await newPipeline(signal);
      const response = await fetch(`${stack.apiUrl}/pipelines/${pipeline.id}/otlp/${signal}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token()}`, 'content-type': 'application/x-protobuf' },
        body: new Uint8Array(0),
      });

      expect(response.status).toBe(404);
      expect(await response.json()).toEqual({ error: 'NOT_FOUND', message });
    });
  }

  it('refuses a gzip bomb and requests past the record and signal limits with a 413, storing nothing', async () => {
    const pipeline = await newPipeline('log bombs');
    const post = async (body: Uint8Array, type: string, gzip: boolean) => {
      const response = await fetch(`${stack.apiUrl}/pipelines/${pipeline.id}/otlp/v1/logs`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token()}`,
          'content-type': type,
          ...(gzip ? { 'content-encoding': 'gzip' } : {}),
        },
        body,
      });
      return { status: response.status, body: (await response.json()) as { message: string } };
    };
    const traceId = 'ab'.repeat(16);
    const evaluation = (index: number) => ({
      timeUnixNano: `${BigInt(Date.now() - 60_000 + index) * 1_000_000n}`,
      eventName: 'gen_ai.evaluation.result',
      traceId,
      attributes: [{ key: 'gen_ai.evaluation.score.value', value: { doubleValue: 0.5 } }],
    });

    const answers = [
      await post(gzipSync(emptyProtobufLogRecords(5_000_000)), 'application/x-protobuf', true),
      await post(emptyProtobufLogRecords(10_001), 'application/x-protobuf', false),
      await post(
        jsonLogRequest(Array.from({ length: 2_001 }, (_, index) => evaluation(index))),
        'application/json',
        false,
      ),
    ];

    expect(answers.map((answer) => answer.status)).toEqual([413, 413, 413]);
    for (const answer of answers) {
      expect(answer.body).toEqual({ error: 'PAYLOAD_TOO_LARGE', message: expect.any(String) });
    }
    expect(answers[1]?.body.message).toContain('at most 10000 log records');
    expect(await signalsOf(pipeline.id)).toEqual([]);
  });
});
