/*
 * The OTLP request bodies of the security review's findings, written byte for byte (no SDK writes
 * them): small bodies that inflate or decode to a great deal, values nested deep, and requests whose
 * spans would store far more than they weigh. Shared by the local stack's test, the bench and the fuzzer.
 */
import { gzipSync } from 'node:zlib';
import protobuf from 'protobufjs/minimal.js';

export interface Bomb {
  name: string;
  body: Buffer;
  contentType: 'application/x-protobuf' | 'application/json';
  gzip: boolean;
  /** What the ingest answers it. */
  status: 400 | 413;
}

/** A protobuf message of length-delimited fields (each a field number and its bytes or text). */
export function protobufMessage(fields: Array<[number, Uint8Array | string]>): Uint8Array {
  const writer = protobuf.Writer.create();
  for (const [field, value] of fields) {
    writer.uint32((field << 3) | 2);
    if (typeof value === 'string') writer.string(value);
    else writer.bytes(value);
  }
  return writer.finish();
}

/** An ExportTraceServiceRequest of `count` empty spans (two bytes each), as one scope's. */
export function emptyProtobufSpans(count: number): Buffer {
  const spans = Buffer.alloc(count * 2);
  for (let at = 0; at < spans.length; at += 2) spans[at] = 0x12; // ScopeSpans.spans (2), length 0
  return Buffer.from(protobufMessage([[1, protobufMessage([[2, spans]])]]));
}

/** An OTLP/JSON request of `count` empty `{}` spans. */
export const emptyJsonSpans = (count: number) =>
  Buffer.from(`{"resourceSpans":[{"scopeSpans":[{"spans":[${new Array(count).fill('{}').join(',')}]}]}]}`);

const nanos = (ms: number) => `${BigInt(Math.round(ms)) * 1_000_000n}`;
const hex = (value: number, digits: number) => value.toString(16).padStart(digits, '0');

/** An OTLP/JSON span with valid ids and times (a minute ago), and these fields. */
export function jsonSpan(trace: number, span: number, fields: Record<string, unknown> = {}) {
  const at = Date.now() - 60_000;
  return {
    traceId: hex(trace, 32),
    spanId: hex(span, 16),
    name: 'root',
    startTimeUnixNano: nanos(at),
    endTimeUnixNano: nanos(at + 100),
    ...fields,
  };
}
export const jsonRequest = (spans: unknown[]) =>
  Buffer.from(JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans }] }] }));

/** One span whose attribute nests an arrayValue `levels` deep (written as text: JSON.stringify would overflow). */
export const deepArrayValue = (levels: number) =>
  Buffer.from(
    jsonRequest([jsonSpan(1, 1, { attributes: [{ key: 'pipeline.slot', value: 'NESTED' }] })])
      .toString('utf8')
      .replace(
        '"NESTED"',
        `${'{"arrayValue":{"values":['.repeat(levels - 1)}{"stringValue":"x"}${']}}'.repeat(levels - 1)}`,
      ),
  );

/** Spans that each stage about 285 KB as read (feature-flag events, read whole): 30 make 8.5 MB. */
export function amplifyingSpans(count: number): Buffer {
  const text = { stringValue: 'x'.repeat(4096) };
  const flags = Array.from({ length: 23 }, () => ({
    name: 'feature_flag.evaluation',
    timeUnixNano: nanos(Date.now() - 59_990),
    attributes: ['feature_flag.key', 'feature_flag.result.variant', 'feature_flag.variant'].map((key) => ({
      key,
      value: text,
    })),
  }));
  return jsonRequest([
    jsonSpan(1, 1),
    ...Array.from({ length: count }, (_, index) =>
      jsonSpan(1, index + 2, { parentSpanId: hex(1, 16), events: flags }),
    ),
  ]);
}

/** The review's bombs, each with the answer it now gets. */
export function reviewBombs(): Bomb[] {
  return [
    {
      name: '5,000,000 empty protobuf spans in 10 KB of gzip',
      body: gzipSync(emptyProtobufSpans(5_000_000)),
      contentType: 'application/x-protobuf',
      gzip: true,
      status: 413,
    },
    {
      name: '10,000,000 {} spans in 30 KB of gzip JSON',
      body: gzipSync(emptyJsonSpans(10_000_000)),
      contentType: 'application/json',
      gzip: true,
      status: 413,
    },
    {
      name: 'a raw 9.8 MB protobuf of empty spans',
      body: emptyProtobufSpans(4_900_000),
      contentType: 'application/x-protobuf',
      gzip: false,
      status: 413,
    },
    {
      name: 'an arrayValue nested 20,000 deep',
      body: deepArrayValue(20_000),
      contentType: 'application/json',
      gzip: false,
      status: 400,
    },
    {
      name: '10,000 traces of one span each (640 KB)',
      body: jsonRequest(Array.from({ length: 10_000 }, (_, trace) => jsonSpan(trace + 1, 1))),
      contentType: 'application/json',
      gzip: false,
      status: 413,
    },
    {
      name: '50 KB of gzip that would stage 8.5 MB',
      body: gzipSync(amplifyingSpans(30)),
      contentType: 'application/json',
      gzip: true,
      status: 413,
    },
  ];
}

/**
 * An ExportLogsServiceRequest of `count` empty log records: the same bytes as `count` empty spans
 * (ResourceLogs.scope_logs and ScopeLogs.log_records are fields 2, as their trace counterparts are).
 */
export const emptyProtobufLogRecords = emptyProtobufSpans;

/** An OTLP/JSON log request of these records. */
export const jsonLogRequest = (logRecords: unknown[]) =>
  Buffer.from(JSON.stringify({ resourceLogs: [{ scopeLogs: [{ logRecords }] }] }));
