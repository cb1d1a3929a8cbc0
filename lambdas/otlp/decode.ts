/*
 * OTLP/HTTP trace requests into the spans the ingest reads (core/otlp/spans.ts), from either
 * encoding: protobuf through protobufjs and the OTLP definitions in proto/ (compiled into the
 * static decoder generated/otlp-request.js), or OTLP/JSON (hex ids, enums as numbers or names, 64-bit
 * integers as strings or numbers), each counted against limits.ts while it is read. A span that
 * cannot be read, or could never become a storable record (core/otlp/check.ts), is refused, with
 * the reason.
 */
import protobuf from 'protobufjs/minimal.js';
import { signalsOfSpan, spanIssue, writeBoundExcess } from '../core/otlp/check.ts';
import {
  ATTRIBUTE_TEXT_LENGTH,
  type Attributes,
  type AttributeValue,
  INPUT_ATTRIBUTES,
  READ_ATTRIBUTES,
  READ_EVENTS,
  type SpanEvent,
  spanJson,
  type TraceSpan,
} from '../core/otlp/spans.ts';
import { INPUT_BYTES } from '../core/schemas/common.ts';
import { opentelemetry } from './generated/otlp-request.js';
import { type OtlpWalk, OverLimitError, scanJson, TRACE_WALK, walkProtobuf } from './limits.ts';

// 64-bit integers (times in nanoseconds, integer attributes) decode as numbers, not long.js
// objects, in every environment alike: what is read of them is milliseconds and counts, where the
// few hundred nanoseconds a double loses past 2^53 do not show. The bundles leave long.js out.
protobuf.util.Long = undefined as unknown as typeof protobuf.util.Long;
protobuf.configure();

/**
 * What a request held: the spans read and their size as read (bytes of JSON), and how many were
 * refused and why (one line a reason).
 */
export interface DecodedRequest {
  spans: TraceSpan[];
  bytes: number;
  rejected: number;
  reasons: Set<string>;
}

/** A body that is no OTLP trace request at all: a 400 (not retryable). */
export class UndecodableBodyError extends Error {}

/** Largest span kept (its read attributes and events as JSON): one stored item holds it. */
export const SPAN_BYTES = 300_000;

export type Raw = Record<string, unknown>;
export type Encoding = 'protobuf' | 'json';

export const isRecord = (value: unknown): value is Raw =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
export const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
export const record = (value: unknown): Raw => (isRecord(value) ? value : {});

const spanType = opentelemetry.proto.trace.v1.Span;
const walkLimits = TRACE_WALK;

/**
 * Decodes a protobuf ExportTraceServiceRequest span by span: the request is walked by its wire
 * format and counted (limits.ts), and each span is decoded, read and let go once its own counts are
 * within the limits; nothing of a request past a limit is built.
 */
export function decodeProtobuf(body: Uint8Array): DecodedRequest {
  const decoded = emptyRequest();
  try {
    walkProtobuf(body, {
      ...walkLimits,
      onRecord: (reader, length) =>
        keep(decoded, readSpan(record(spanType.decode(reader, length)), 'protobuf')),
    });
  } catch (error) {
    if (error instanceof OverLimitError) throw error;
    throw new UndecodableBodyError('The body is not an OTLP ExportTraceServiceRequest in protobuf.', {
      cause: error,
    });
  }
  return decoded;
}

/**
 * Counts the first bytes of a longer body (the first inflated bytes of a gzip one): past a limit
 * already there, the request is refused (OverLimitError) before the rest is inflated or read. The
 * counts of the first bytes are a part of the whole's, so nothing the whole body passes is refused;
 * whatever else they show (a cut value, broken bytes) is left to the whole body.
 */
export function countPrefix(first: Uint8Array, encoding: Encoding, walk: OtlpWalk = TRACE_WALK): void {
  try {
    if (encoding === 'protobuf') {
      walkProtobuf(first, { ...walk, prefix: true, onRecord: () => undefined });
    } else {
      const text = Buffer.from(first.buffer, first.byteOffset, first.length).toString('utf8');
      scanJson(text.slice(0, wholeTokensEnd(text)), walk);
    }
  } catch (error) {
    if (error instanceof OverLimitError) throw error;
  }
}

/**
 * Where the text's last bracket or comma ends: every token before it is whole and followed by the
 * character that says what it is (a key's colon), so the cut text counts as the whole one does.
 */
function wholeTokensEnd(text: string): number {
  for (let at = text.length - 1; at >= 0; at--) {
    const code = text.charCodeAt(at);
    if (code === 0x2c || code === 0x7b || code === 0x5b || code === 0x7d || code === 0x5d) return at + 1;
  }
  return 0;
}

/**
 * An OTLP/JSON export request, counted by `walk` (limits.ts) before it is parsed, as an object
 * whose `top` (resourceSpans, resourceLogs) is a list when present; `message` names the request.
 */
export function parseCountedJson(text: string, walk: OtlpWalk, message: string, top: string): Raw {
  let value: unknown;
  try {
    scanJson(text, walk);
    value = JSON.parse(text);
  } catch (error) {
    if (error instanceof OverLimitError) throw error;
    throw new UndecodableBodyError(`The body is not JSON: send an OTLP/JSON ${message}.`, { cause: error });
  }
  if (!isRecord(value) || (value[top] !== undefined && !Array.isArray(value[top]))) {
    throw new UndecodableBodyError(`The body is not an OTLP/JSON ${message} ({${top}: [...]}).`);
  }
  return value;
}

/** Decodes an OTLP/JSON ExportTraceServiceRequest, counted (limits.ts) before it is parsed. */
export function decodeJson(text: string): DecodedRequest {
  const value = parseCountedJson(text, walkLimits, 'ExportTraceServiceRequest', 'resourceSpans');
  const decoded = emptyRequest();
  for (const resourceSpans of list(value.resourceSpans)) {
    const scopes = [
      ...list(record(resourceSpans).scopeSpans),
      ...list(record(resourceSpans).instrumentationLibrarySpans),
    ];
    for (const scope of scopes) {
      for (const raw of list(record(scope).spans)) keep(decoded, readSpan(record(raw), 'json'));
    }
  }
  return decoded;
}

const emptyRequest = (): DecodedRequest => ({ spans: [], bytes: 0, rejected: 0, reasons: new Set() });

/** What the kept spans would store so far: past a write bound, the request stops here (413). */
const tallies = new WeakMap<DecodedRequest, { traces: Set<string>; signals: number }>();
function countStored(decoded: DecodedRequest, span: TraceSpan): void {
  const tally = tallies.get(decoded) ?? { traces: new Set<string>(), signals: 0 };
  tallies.set(decoded, tally);
  tally.traces.add(span.traceId);
  tally.signals += signalsOfSpan(span);
  const over = writeBoundExcess(tally.traces.size, tally.signals, decoded.bytes);
  if (over) throw new OverLimitError(over, 413);
}

/** Keeps a span read, or counts it refused with its reason (too large, or never a storable record). */
function keep(decoded: DecodedRequest, span: TraceSpan | string): void {
  const bytes = typeof span === 'string' ? 0 : Buffer.byteLength(spanJson(span));
  const issue =
    typeof span === 'string'
      ? span
      : bytes > SPAN_BYTES
        ? `a span's read attributes and events must fit ${SPAN_BYTES} bytes`
        : spanIssue(span);
  if (issue !== undefined) {
    decoded.rejected++;
    decoded.reasons.add(issue);
  } else if (typeof span !== 'string') {
    decoded.spans.push(span);
    decoded.bytes += bytes;
    countStored(decoded, span);
  }
}

/** A span, or why it is refused. */
function readSpan(raw: Raw, encoding: Encoding): TraceSpan | string {
  const traceId = idOf(raw.traceId, 16, encoding);
  if (traceId === undefined) return 'a trace id must be 16 bytes (32 hex digits), not all zero';
  const spanId = idOf(raw.spanId, 8, encoding);
  if (spanId === undefined) return 'a span id must be 8 bytes (16 hex digits), not all zero';
  const parent = raw.parentSpanId;
  const parentSpanId = isEmptyId(parent) ? undefined : idOf(parent, 8, encoding);
  if (!isEmptyId(parent) && parentSpanId === undefined) {
    return 'a parent span id must be 8 bytes (16 hex digits) or empty';
  }
  const startMs = millisOf(raw.startTimeUnixNano);
  const endMs = millisOf(raw.endTimeUnixNano);
  if (startMs === undefined || endMs === undefined || endMs < startMs) {
    return 'a span needs its start and end times (end not before start)';
  }
  const status = record(raw.status);
  const message = typeof status.message === 'string' && status.message !== '' ? status.message : undefined;
  return {
    traceId,
    spanId,
    ...(parentSpanId ? { parentSpanId } : {}),
    name: text(typeof raw.name === 'string' ? raw.name : ''),
    startMs,
    endMs,
    status: statusOf(status.code),
    ...(message ? { statusMessage: text(message) } : {}),
    attributes: attributesOf(raw.attributes, encoding),
    events: eventsOf(raw.events, encoding),
  };
}

function eventsOf(raw: unknown, encoding: Encoding): SpanEvent[] {
  const events: SpanEvent[] = [];
  for (const item of list(raw)) {
    const event = record(item);
    if (typeof event.name !== 'string' || !READ_EVENTS.has(event.name)) continue;
    const atMs = millisOf(event.timeUnixNano);
    if (atMs === undefined) continue;
    events.push({ name: event.name, atMs, attributes: attributesOf(event.attributes, encoding) });
  }
  return events;
}

/** The attributes of `read` (the span mapping's by default); an input is kept whole or not at all. */
export function attributesOf(
  raw: unknown,
  encoding: Encoding,
  read: ReadonlySet<string> = READ_ATTRIBUTES,
): Attributes {
  const attributes: Attributes = {};
  for (const item of list(raw)) {
    const pair = record(item);
    if (typeof pair.key !== 'string' || !read.has(pair.key)) continue;
    const value = anyValueOf(record(pair.value), encoding);
    if (value === undefined) continue;
    if (INPUT_ATTRIBUTES.has(pair.key)) {
      // An input is kept whole or not at all: a cut one could not be replayed.
      if (typeof value === 'string' && Buffer.byteLength(value) <= INPUT_BYTES) attributes[pair.key] = value;
      continue;
    }
    attributes[pair.key] = typeof value === 'string' ? text(value) : value;
  }
  return attributes;
}

/** An AnyValue as the mapping reads it: scalars, and arrays of strings (others are dropped). */
function anyValueOf(value: Raw, encoding: Encoding): AttributeValue | undefined {
  // A protobuf message answers every field (unset ones with defaults): its oneof names the set one.
  const set =
    encoding === 'protobuf' ? value.value : Object.keys(value).find((key) => ANY_VALUE_FIELDS.has(key));
  if (typeof set !== 'string') return undefined;
  const field = value[set];
  switch (set) {
    case 'stringValue':
      return typeof field === 'string' ? field : undefined;
    case 'boolValue':
      return typeof field === 'boolean' ? field : undefined;
    case 'intValue':
    case 'doubleValue': {
      const number = Number(typeof field === 'object' && field !== null ? String(field) : field);
      return Number.isFinite(number) ? number : undefined;
    }
    case 'arrayValue': {
      const items = list(record(field).values).map((item) => anyValueOf(record(item), encoding));
      return items.filter((item): item is string => typeof item === 'string').map(text);
    }
    default:
      return undefined;
  }
}

const ANY_VALUE_FIELDS = new Set([
  'stringValue',
  'boolValue',
  'intValue',
  'doubleValue',
  'arrayValue',
  'kvlistValue',
  'bytesValue',
]);

const text = (value: string) =>
  value.length > ATTRIBUTE_TEXT_LENGTH ? value.slice(0, ATTRIBUTE_TEXT_LENGTH) : value;

/** No parent: absent, empty text, or empty bytes (protobufjs gives an absent bytes field as []). */
export const isEmptyId = (value: unknown) =>
  value === undefined ||
  value === null ||
  value === '' ||
  ((value instanceof Uint8Array || Array.isArray(value)) && value.length === 0);

const ZERO = /^0+$/;
const HEX = /^[0-9a-fA-F]+$/;

/** An id in lower-case hex: bytes in protobuf, hex text in OTLP/JSON; undefined when malformed. */
export function idOf(value: unknown, bytes: number, encoding: Encoding): string | undefined {
  let hex: string | undefined;
  if (encoding === 'protobuf' && value instanceof Uint8Array && value.length === bytes) {
    hex = Buffer.from(value.buffer, value.byteOffset, value.length).toString('hex');
  } else if (
    encoding === 'json' &&
    typeof value === 'string' &&
    value.length === bytes * 2 &&
    HEX.test(value)
  ) {
    hex = value.toLowerCase();
  }
  return hex === undefined || ZERO.test(hex) ? undefined : hex;
}

/**
 * Nanoseconds since the epoch (a protobuf Long or number, a JSON string or number) in milliseconds.
 * A number past 2^53 (protobuf's 64-bit fields decode as numbers) has lost up to 128 ns, which
 * could move a time on a whole millisecond to the one before: it is rounded to the nearest
 * microsecond, which restores any time given in whole microseconds exactly.
 */
export function millisOf(value: unknown): number | undefined {
  let nanos: bigint;
  try {
    if (typeof value === 'string' && /^\d{1,20}$/.test(value)) nanos = BigInt(value);
    else if (typeof value === 'number' && Number.isInteger(value) && value >= 0)
      nanos = BigInt(Math.round(value / 1000)) * 1000n;
    else if (isRecord(value) && typeof value.low === 'number' && typeof value.high === 'number') {
      nanos = (BigInt(value.high >>> 0) << 32n) | BigInt(value.low >>> 0);
    } else return undefined;
  } catch {
    return undefined;
  }
  return nanos === 0n ? undefined : Number(nanos / 1000n) / 1000;
}

const STATUS_NAMES: Record<string, TraceSpan['status']> = {
  STATUS_CODE_OK: 'ok',
  STATUS_CODE_ERROR: 'error',
};

function statusOf(code: unknown): TraceSpan['status'] {
  if (code === 2 || code === 'STATUS_CODE_ERROR') return 'error';
  if (code === 1) return 'ok';
  return typeof code === 'string' ? (STATUS_NAMES[code] ?? 'unset') : 'unset';
}

/** Appends `value` as a protobuf varint. */
function varint(value: number, out: number[]): number[] {
  let rest = value;
  while (rest > 0x7f) {
    out.push((rest % 0x80) | 0x80);
    rest = Math.floor(rest / 0x80);
  }
  out.push(rest);
  return out;
}

/**
 * The ExportTraceServiceResponse (or ExportLogsServiceResponse) in protobuf: field 1
 * `partial_success` {1: `rejected_spans` (`rejected_log_records`) int64, 2: `error_message` string}, as the OTLP specification numbers them (the kept definitions predate
 * the field); empty when none refused. Written here, three fields, rather than with protobufjs's
 * writer, which the bundles leave out (lambdas/wiring/protobuf-reader.js).
 */
export function encodeResponse(partialSuccess: { rejected: number; errorMessage: string } | undefined) {
  if (!partialSuccess) return new Uint8Array(0);
  const message = Buffer.from(partialSuccess.errorMessage, 'utf8');
  const fields = Buffer.concat([
    Buffer.from(varint(partialSuccess.rejected, [1 << 3])),
    Buffer.from(varint(message.length, [(2 << 3) | 2])),
    message,
  ]);
  return Buffer.concat([Buffer.from(varint(fields.length, [(1 << 3) | 2])), fields]);
}
