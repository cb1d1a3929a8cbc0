/*
 * OTLP/HTTP log requests into the evaluation results the ingest reads (core/otlp/logs.ts), from
 * protobuf (the static decoder of generated/otlp-request.js, record by record inside the walk of
 * limits.ts) or OTLP/JSON (scanned before it is parsed), counted as traces are. A log record that
 * is no evaluation result, or one that cannot be read, is refused with the reason.
 */
import { createHash } from 'node:crypto';
import { writeBoundExcess } from '../core/otlp/check.ts';
import { EVALUATION_EVENT, type EvaluationRecord, LOG_READ_ATTRIBUTES } from '../core/otlp/logs.ts';
import {
  attributesOf,
  type Encoding,
  idOf,
  isEmptyId,
  list,
  millisOf,
  parseCountedJson,
  type Raw,
  record,
  UndecodableBodyError,
} from './decode.ts';
import { opentelemetry } from './generated/otlp-request.js';
import { LOG_WALK, OverLimitError, walkProtobuf } from './limits.ts';

/** What a log request held: its evaluation results, and how many records were refused and why. */
export interface DecodedLogs {
  records: EvaluationRecord[];
  rejected: number;
  reasons: Set<string>;
}

const logRecordType = opentelemetry.proto.logs.v1.LogRecord;

/** Decodes a protobuf ExportLogsServiceRequest record by record, each once its counts are within the limits. */
export function decodeLogsProtobuf(body: Uint8Array): DecodedLogs {
  const decoded = emptyLogs();
  try {
    walkProtobuf(body, {
      ...LOG_WALK,
      onRecord: (reader, length) =>
        keep(decoded, readLogRecord(record(logRecordType.decode(reader, length)), 'protobuf')),
    });
  } catch (error) {
    if (error instanceof OverLimitError) throw error;
    throw new UndecodableBodyError('The body is not an OTLP ExportLogsServiceRequest in protobuf.', {
      cause: error,
    });
  }
  return decoded;
}

/** Decodes an OTLP/JSON ExportLogsServiceRequest, counted (limits.ts) before it is parsed. */
export function decodeLogsJson(text: string): DecodedLogs {
  const value = parseCountedJson(text, LOG_WALK, 'ExportLogsServiceRequest', 'resourceLogs');
  const decoded = emptyLogs();
  for (const resourceLogs of list(value.resourceLogs)) {
    for (const scope of list(record(resourceLogs).scopeLogs)) {
      for (const raw of list(record(scope).logRecords)) keep(decoded, readLogRecord(record(raw), 'json'));
    }
  }
  return decoded;
}

const emptyLogs = (): DecodedLogs => ({ records: [], rejected: 0, reasons: new Set() });

/** The traces and signals of the records kept so far: past a write bound, the request stops here (413). */
const tallies = new WeakMap<DecodedLogs, Set<string>>();

function keep(decoded: DecodedLogs, read: EvaluationRecord | string): void {
  if (typeof read === 'string') {
    decoded.rejected++;
    decoded.reasons.add(read);
    return;
  }
  decoded.records.push(read);
  const traces = tallies.get(decoded) ?? new Set<string>();
  tallies.set(decoded, traces);
  traces.add(read.traceId);
  const over = writeBoundExcess(traces.size, decoded.records.length, 0);
  if (over) throw new OverLimitError(over, 413);
}

export const NOT_AN_EVALUATION = `only ${EVALUATION_EVENT} log records (event_name or the attribute event.name) are read; other log records are not kept`;

/** An evaluation result, or why the record is refused. */
function readLogRecord(raw: Raw, encoding: Encoding): EvaluationRecord | string {
  const attributes = attributesOf(raw.attributes, encoding, LOG_READ_ATTRIBUTES);
  const eventName = typeof raw.eventName === 'string' && raw.eventName !== '' ? raw.eventName : undefined;
  if ((eventName ?? attributes['event.name']) !== EVALUATION_EVENT) return NOT_AN_EVALUATION;
  delete attributes['event.name'];
  const traceId = idOf(raw.traceId, 16, encoding);
  if (traceId === undefined) {
    return "an evaluation result's log record needs the trace id of the execution it evaluates (16 bytes, 32 hex digits, not all zero)";
  }
  const spanId = isEmptyId(raw.spanId) ? undefined : idOf(raw.spanId, 8, encoding);
  if (!isEmptyId(raw.spanId) && spanId === undefined) {
    return 'a log record span id must be 8 bytes (16 hex digits) or empty';
  }
  const atMs = millisOf(raw.timeUnixNano) ?? millisOf(raw.observedTimeUnixNano);
  if (atMs === undefined) return 'a log record needs its time (time_unix_nano or observed_time_unix_nano)';
  const id = createHash('sha256')
    .update(JSON.stringify([traceId, spanId ?? '', atMs, attributes]))
    .digest('hex')
    .slice(0, 16);
  return { id, traceId, ...(spanId ? { spanId } : {}), atMs, attributes };
}
