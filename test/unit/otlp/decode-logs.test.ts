/**
 * OTLP log requests as the published logs SDK writes them (protobuf and JSON), decoded into the
 * evaluation results the ingest reads: which records are read, with their trace, span, time and
 * evaluation attributes; which are refused and why; and the limits, counted as traces' are.
 */
import { describe, expect, it } from 'vitest';
import { PayloadTooLargeError, ValidationError } from '../../../lambdas/core/errors.ts';
import { NOT_AN_EVALUATION } from '../../../lambdas/otlp/decode-logs.ts';
import { decodeLogsRequest, exportResponse } from '../../../lambdas/otlp/http.ts';
import { emptyProtobufLogRecords, jsonLogRequest } from '../../support/otlp-bombs.ts';
import {
  jsonLogsBody,
  protobufLogsBody,
  recordingLogger,
  recordingTracer,
} from '../../support/otlp-requests.ts';

// Passed as a Date: the logs SDK reads a number earlier than its process start as performance.now().
const AT = 1_764_291_747_010;
const EVALUATION = {
  'gen_ai.evaluation.name': 'Relevance',
  'gen_ai.evaluation.score.value': 0.25,
  'gen_ai.evaluation.score.label': 'irrelevant',
  'gen_ai.evaluation.explanation': 'the answer cites no document',
};

/** A span to evaluate, and records emitted in its context through the SDK's logger. */
function evaluatedSpan() {
  const tracer = recordingTracer();
  const span = tracer.open({ name: 'chat', start: AT - 1000, end: AT });
  const logger = recordingLogger();
  return { span, logger, traceId: span.spanContext().traceId, spanId: span.spanContext().spanId };
}

const encodings = [
  { name: 'protobuf', encoding: 'protobuf' as const, body: protobufLogsBody },
  { name: 'OTLP/JSON', encoding: 'json' as const, body: jsonLogsBody },
];

describe.each(encodings)('decoding OTLP logs in $name', ({ encoding, body }) => {
  it('reads an evaluation result named by event_name, with its trace, span, time and evaluation', () => {
    const { span, logger, traceId, spanId } = evaluatedSpan();
    logger.emit(
      {
        eventName: 'gen_ai.evaluation.result',
        timestamp: new Date(AT),
        attributes: { ...EVALUATION, 'user.id': 'not read' },
        body: 'free text is not read',
      },
      span,
    );

    const decoded = decodeLogsRequest(body(logger.records()), encoding);

    expect(decoded.rejected).toBe(0);
    expect(decoded.records).toEqual([
      { id: expect.stringMatching(/^[0-9a-f]{16}$/), traceId, spanId, atMs: AT, attributes: EVALUATION },
    ]);
  });

  it('reads one named by the attribute event.name, and gives the same record sent again the same id', () => {
    const { span, logger, traceId } = evaluatedSpan();
    const record = {
      timestamp: new Date(AT),
      attributes: { 'event.name': 'gen_ai.evaluation.result', ...EVALUATION },
    };
    logger.emit(record, span);
    logger.emit(record, span);

    const [first, again] = decodeLogsRequest(body(logger.records()), encoding).records;

    expect(first).toMatchObject({ traceId, attributes: EVALUATION });
    expect(again?.id).toBe(first?.id);
  });

  it('refuses other log records and evaluation results without a trace, each with its reason', () => {
    const { span, logger } = evaluatedSpan();
    logger.emit({ body: 'retrieved 8 documents', timestamp: new Date(AT) }, span);
    logger.emit({ eventName: 'gen_ai.client.inference.operation.details', timestamp: new Date(AT) }, span);
    logger.emit({ eventName: 'gen_ai.evaluation.result', timestamp: new Date(AT), attributes: EVALUATION });

    const decoded = decodeLogsRequest(body(logger.records()), encoding);

    expect(decoded.records).toEqual([]);
    expect(decoded.rejected).toBe(3);
    expect([...decoded.reasons]).toEqual([
      NOT_AN_EVALUATION,
      expect.stringContaining('needs the trace id of the execution it evaluates'),
    ]);
  });

  it('refuses a request with more than 128 attributes on a log record whole (413)', () => {
    const { span, logger } = evaluatedSpan();
    const attributes = Object.fromEntries(Array.from({ length: 129 }, (_, index) => [`a${index}`, index]));
    logger.emit({ eventName: 'gen_ai.evaluation.result', timestamp: new Date(AT), attributes }, span);
    const records = logger.records();
    // The SDK keeps 128 attributes by default: the 129th is written as a hostile exporter would.
    (records[0] as unknown as { attributes: Record<string, number> }).attributes = attributes;

    expect(() => decodeLogsRequest(body(records), encoding)).toThrow(
      /A log record, scope or resource holds at most 128 attributes/,
    );
  });
});

describe('the limits of an OTLP log request', () => {
  it('refuses more than 10,000 log records whole (413), in protobuf and JSON', () => {
    for (const [request, encoding] of [
      [emptyProtobufLogRecords(10_001), 'protobuf'],
      [jsonLogRequest(Array.from({ length: 10_001 }, () => ({}))), 'json'],
    ] as const) {
      expect(() => decodeLogsRequest(request, encoding)).toThrow(PayloadTooLargeError);
      expect(() => decodeLogsRequest(request, encoding)).toThrow(/at most 10000 log records/);
    }
  });

  it('refuses more evaluation results than one request may store as signals (413)', () => {
    const records = Array.from({ length: 2_001 }, (_, index) => ({
      timeUnixNano: `${BigInt(AT + index) * 1_000_000n}`,
      eventName: 'gen_ai.evaluation.result',
      traceId: 'ab'.repeat(16),
    }));

    expect(() => decodeLogsRequest(jsonLogRequest(records), 'json')).toThrow(/2001 signals/);
  });

  it('answers a body that is no log request with a 400 naming what to send', () => {
    expect(() => decodeLogsRequest(Buffer.from('{"resourceLogs":{}}'), 'json')).toThrow(ValidationError);
    expect(() => decodeLogsRequest(Buffer.from([0x0a, 0xff]), 'protobuf')).toThrow(
      /not an OTLP ExportLogsServiceRequest in protobuf/,
    );
  });
});

describe('the answer to an OTLP log request', () => {
  it('names the refused log records rejectedLogRecords, in JSON and in protobuf', () => {
    const json = exportResponse('json', 2, ['one reason'], 'logs');
    expect(JSON.parse(String(json.body))).toEqual({
      partialSuccess: { rejectedLogRecords: 2, errorMessage: '2 log records refused: one reason.' },
    });
    const protobuf = exportResponse('protobuf', 2, ['one reason'], 'logs');
    // ExportLogsPartialSuccess: field 1 rejected_log_records = 2, field 2 the message.
    expect(Buffer.from(String(protobuf.body), 'base64').subarray(2, 4)).toEqual(Buffer.from([0x08, 0x02]));
  });
});
