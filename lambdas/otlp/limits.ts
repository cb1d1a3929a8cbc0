/*
 * What one OTLP request may hold, counted while it is read, before anything is built of it: records
 * (spans, log records), attributes and events of each, how deep an attribute value nests, and
 * how many values the request holds in all. One walk per encoding over a table of the messages
 * (shapes), so a signal other than traces (logs) is one more table: protobuf by its wire format
 * (protobufjs's reader, nothing decoded), OTLP/JSON by its text (no JSON.parse before the counts).
 */
import protobuf from 'protobufjs/minimal.js';
import { SPANS_PER_REQUEST } from '../core/otlp/spans.ts';

/** The bounds of one request (docs/opentelemetry.md, "Limits"). */
export interface OtlpLimits {
  /** Records (spans) a request. */
  records: number;
  /** Attributes of a record, of each of its events and of each of its links. */
  attributes: number;
  /** Events of a record, and links of a record. */
  events: number;
  /** Nesting of an attribute value (an array or key-value list in one is a level). */
  depth: number;
  /** Every value of a request: each protobuf message, each JSON value. */
  values: number;
  /** What holds attributes, as the 413 names it. */
  holders: string;
}

/** What a trace request may hold: OpenTelemetry's default span limits, 10,000 spans. */
export const TRACE_LIMITS: OtlpLimits = {
  records: SPANS_PER_REQUEST,
  attributes: 128,
  events: 128,
  depth: 32,
  values: 2_000_000,
  holders: 'A span, event, link or resource',
};

/** What a log request may hold: the same bounds, 10,000 log records (a log record has no events). */
export const LOG_LIMITS: OtlpLimits = { ...TRACE_LIMITS, holders: 'A log record, scope or resource' };

/** A request past a limit (413), or one whose values nest too deep (400): refused whole. */
export class OverLimitError extends Error {
  constructor(
    message: string,
    readonly status: 400 | 413,
  ) {
    super(message);
  }
}

/** A body that is not what its encoding says (a 400): the message is ours, never the library's. */
export class MalformedBodyError extends Error {}

type Role = 'record' | 'attribute' | 'event' | 'link';
/** A field holding a message: its number (protobuf), its name (JSON), the message, what it counts as. */
interface Field {
  number: number;
  name: string;
  to: string;
  role?: Role;
}
/** The messages of a request by name, each with the fields that hold messages. */
export type Shapes = Readonly<Record<string, readonly Field[]>>;

const f = (number: number, name: string, to: string, role?: Role): Field => ({
  number,
  name,
  to,
  ...(role ? { role } : {}),
});

/** The messages every OTLP signal shares: resources, scopes, key-values and AnyValue. */
const COMMON: Shapes = {
  resource: [f(1, 'attributes', 'keyValue', 'attribute')],
  scope: [f(3, 'attributes', 'keyValue', 'attribute')],
  keyValue: [f(2, 'value', 'anyValue')],
  anyValue: [f(5, 'arrayValue', 'arrayValue'), f(6, 'kvlistValue', 'kvList')],
  arrayValue: [f(1, 'values', 'anyValue')],
  kvList: [f(1, 'values', 'keyValue')],
};

/** ExportTraceServiceRequest (opentelemetry/proto/trace/v1/trace.proto, collector/trace/v1). */
export const TRACE_SHAPES: Shapes = {
  ...COMMON,
  request: [f(1, 'resourceSpans', 'resourceSpans')],
  resourceSpans: [
    f(1, 'resource', 'resource'),
    f(2, 'scopeSpans', 'scopeSpans'),
    f(1000, 'instrumentationLibrarySpans', 'scopeSpans'),
  ],
  scopeSpans: [f(1, 'scope', 'scope'), f(2, 'spans', 'span', 'record')],
  span: [
    f(9, 'attributes', 'keyValue', 'attribute'),
    f(11, 'events', 'event', 'event'),
    f(13, 'links', 'link', 'link'),
  ],
  event: [f(3, 'attributes', 'keyValue', 'attribute')],
  link: [f(4, 'attributes', 'keyValue', 'attribute')],
};

/** ExportLogsServiceRequest (opentelemetry/proto/logs/v1/logs.proto, collector/logs/v1). */
export const LOG_SHAPES: Shapes = {
  ...COMMON,
  request: [f(1, 'resourceLogs', 'resourceLogs')],
  resourceLogs: [f(1, 'resource', 'resource'), f(2, 'scopeLogs', 'scopeLogs')],
  scopeLogs: [f(1, 'scope', 'scope'), f(2, 'logRecords', 'logRecord', 'record')],
  // The body is an AnyValue: its nesting and values count as an attribute's do.
  logRecord: [f(5, 'body', 'anyValue'), f(6, 'attributes', 'keyValue', 'attribute')],
};

/** How each signal's request is walked (protobuf) and scanned (JSON). */
export type OtlpWalk = Omit<ProtobufWalk, 'onRecord' | 'prefix'>;
export const TRACE_WALK: OtlpWalk = {
  shapes: TRACE_SHAPES,
  root: 'request',
  limits: TRACE_LIMITS,
  records: 'spans',
};
export const LOG_WALK: OtlpWalk = {
  shapes: LOG_SHAPES,
  root: 'request',
  limits: LOG_LIMITS,
  records: 'log records',
};

/** Counts of one request, and of the message being read. */
interface Count {
  records: number;
  values: number;
}
interface Owner {
  attribute: number;
  event: number;
  link: number;
}

/** Counts one child of `owner` in its role; throws past a limit. */
function countChild(role: Role | undefined, owner: Owner, count: Count, limits: OtlpLimits, what: string) {
  if (++count.values > limits.values) {
    throw new OverLimitError(
      `An OTLP request holds at most ${limits.values} values in all: send smaller batches.`,
      413,
    );
  }
  if (role === 'record' && ++count.records > limits.records) {
    throw new OverLimitError(
      `An OTLP request holds at most ${limits.records} ${what}: send smaller batches (the SDKs' batch processors send 512; a Collector's batch processor: set send_batch_max_size).`,
      413,
    );
  }
  if (role === 'attribute' && ++owner.attribute > limits.attributes) {
    throw new OverLimitError(
      `${limits.holders} holds at most ${limits.attributes} attributes (OpenTelemetry's default limit): the request is refused.`,
      413,
    );
  }
  if ((role === 'event' || role === 'link') && ++owner[role] > limits.events) {
    throw new OverLimitError(
      `A span holds at most ${limits.events} events and ${limits.events} links (OpenTelemetry's default limits): the request is refused.`,
      413,
    );
  }
}

const tooDeep = (limits: OtlpLimits) =>
  new OverLimitError(`An attribute value is nested deeper than ${limits.depth} levels.`, 400);

export interface ProtobufWalk {
  shapes: Shapes;
  /** The request's message (a key of shapes). */
  root: string;
  limits: OtlpLimits;
  /** What the records are called in a message ("spans"). */
  records: string;
  /** Each record's bytes, once its own counts are within the limits, in order. */
  onRecord: (reader: protobuf.Reader, length: number) => void;
  /**
   * The body is the first bytes of a longer one: a message running past them is counted as far as
   * they go, nothing is handed to onRecord, and the walk ends where they do.
   */
  prefix?: boolean;
}

/**
 * Walks a protobuf request by its wire format, counting as it goes; each record is handed to
 * `onRecord` (which decodes it) once its own fields are counted. Nothing else is decoded.
 */
export function walkProtobuf(body: Uint8Array, walk: ProtobufWalk): void {
  const reader = protobuf.Reader.create(body);
  const count: Count = { records: 0, values: 0 };
  const fields = new Map(
    Object.entries(walk.shapes).map(([name, list]) => [
      name,
      new Map(list.map((field) => [field.number, field])),
    ]),
  );
  const visit = (shape: string, end: number, depth: number, onRecord: boolean) => {
    const own = fields.get(shape);
    const owner: Owner = { attribute: 0, event: 0, link: 0 };
    while (reader.pos < end) {
      const tag = reader.tag();
      const field = own?.get(tag >>> 3);
      if (field === undefined || (tag & 7) !== 2) {
        reader.skipType(tag & 7);
        continue;
      }
      const length = reader.size();
      const start = reader.pos;
      const stop = walk.prefix ? Math.min(start + length, end) : start + length;
      if (stop > end) throw new MalformedBodyError('a length runs past its message');
      countChild(field.role, owner, count, walk.limits, walk.records);
      const nested = field.to === 'anyValue' ? depth + 1 : depth;
      if (nested > walk.limits.depth) throw tooDeep(walk.limits);
      visit(field.to, stop, nested, onRecord && field.role !== 'record');
      if (walk.prefix && stop < start + length) return;
      if (field.role === 'record' && onRecord) {
        reader.pos = start;
        walk.onRecord(reader, length);
      }
      reader.pos = start + length;
    }
    if (reader.pos !== end) throw new MalformedBodyError('a field runs past its message');
  };
  try {
    visit(walk.root, body.length, 0, !walk.prefix);
  } catch (error) {
    if (error instanceof OverLimitError || error instanceof MalformedBodyError) throw error;
    // protobufjs's own words (offsets, wire types) stay in the logs' cause, not in the answer.
    throw new MalformedBodyError('the protobuf wire format is broken', { cause: error });
  }
}

/** Where the JSON scan is: an object (expecting a key or after one) or an array, with its shape. */
interface Frame {
  array: boolean;
  /** The message an object is, or the message an array's elements are; undefined when not read. */
  shape: string | undefined;
  /** An array's role for its elements (their owner is the object holding the array). */
  role?: Role | undefined;
  owner: Owner;
  /** Fields of an object: the last key read. */
  key?: string | undefined;
  depth: number;
}

/** Deepest JSON nesting looked at (an OTLP span's attribute 32 levels deep is about 110). */
const JSON_DEPTH = 128;
const WHITESPACE = new Set([0x20, 0x0a, 0x0d, 0x09]);

export interface JsonScan {
  shapes: Shapes;
  root: string;
  limits: OtlpLimits;
  records: string;
}

/**
 * Counts an OTLP/JSON request in one pass over its text, before JSON.parse builds anything: a
 * request within the limits parses into at most `limits.values` values. Text that is not JSON is
 * left for JSON.parse to refuse (the scan only stops at what it cannot follow).
 */
export function scanJson(text: string, scan: JsonScan): void {
  const count: Count = { records: 0, values: 0 };
  const fieldsByName = new Map(
    Object.entries(scan.shapes).map(([name, list]) => [
      name,
      new Map(list.map((field) => [field.name, field])),
    ]),
  );
  const stack: Frame[] = [];
  const noOwner: Owner = { attribute: 0, event: 0, link: 0 };
  /** A value starts here: what it is, from the frame it is in, counted in its role. */
  const opened = (array: boolean): Frame => {
    const parent = stack.at(-1);
    const depth = parent?.depth ?? 0;
    let shape: string | undefined;
    let role: Role | undefined;
    let owner = noOwner;
    if (parent === undefined) shape = scan.root;
    else if (parent.array) {
      // An element of a repeated field: a message of the array's shape, counted in its role.
      if (!array) ({ shape, role, owner } = { shape: parent.shape, role: parent.role, owner: parent.owner });
    } else {
      const field = parent.shape ? fieldsByName.get(parent.shape)?.get(parent.key ?? '') : undefined;
      // A repeated field's array: its elements are the field's messages, owned by this object.
      if (array) return countedArray(field, parent.owner, depth);
      ({ shape, role, owner } = { shape: field?.to, role: field?.role, owner: parent.owner });
    }
    countChild(role, owner, count, scan.limits, scan.records);
    if (array) return { array, shape: undefined, owner: noOwner, depth };
    const nested = shape === 'anyValue' ? depth + 1 : depth;
    if (nested > scan.limits.depth) throw tooDeep(scan.limits);
    return { array, shape, owner: { attribute: 0, event: 0, link: 0 }, depth: nested };
  };
  const countedArray = (field: Field | undefined, owner: Owner, depth: number): Frame => {
    countChild(undefined, noOwner, count, scan.limits, scan.records);
    return { array: true, shape: field?.to, role: field?.role, owner, depth };
  };
  let at = 0;
  const length = text.length;
  while (at < length) {
    const code = text.charCodeAt(at);
    if (WHITESPACE.has(code) || code === 0x2c /* , */ || code === 0x3a /* : */) {
      at++;
    } else if (code === 0x7b /* { */ || code === 0x5b /* [ */) {
      const frame = opened(code === 0x5b);
      if (stack.length >= JSON_DEPTH) {
        throw new OverLimitError(`The body is nested deeper than ${JSON_DEPTH} levels.`, 400);
      }
      stack.push(frame);
      at++;
    } else if (code === 0x7d /* } */ || code === 0x5d /* ] */) {
      if (stack.pop() === undefined) throw new MalformedBodyError('a bracket closes nothing');
      at++;
    } else if (code === 0x22 /* " */) {
      const end = stringEnd(text, at);
      const top = stack.at(-1);
      // In an object, a string followed by ':' is a key; any other string is a value.
      if (top && !top.array && text.charCodeAt(nextNonSpace(text, end)) === 0x3a) {
        top.key = text.slice(at + 1, end - 1);
      } else countChild(undefined, noOwner, count, scan.limits, scan.records);
      at = end;
    } else {
      // A number, true, false or null: one value, up to the next delimiter.
      countChild(undefined, noOwner, count, scan.limits, scan.records);
      at = scalarEnd(text, at);
    }
  }
}

/** The index past a JSON string's closing quote (escapes skipped). */
function stringEnd(text: string, start: number): number {
  let at = start + 1;
  for (;;) {
    const quote = text.indexOf('"', at);
    if (quote < 0) throw new MalformedBodyError('a string does not end');
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === 0x5c) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    at = quote + 1;
  }
}

function nextNonSpace(text: string, from: number): number {
  let at = from;
  while (at < text.length && WHITESPACE.has(text.charCodeAt(at))) at++;
  return at;
}

const DELIMITERS = new Set([0x2c, 0x7d, 0x5d, 0x3a, 0x20, 0x0a, 0x0d, 0x09, 0x22, 0x7b, 0x5b]);

function scalarEnd(text: string, from: number): number {
  let at = from + 1;
  while (at < text.length && !DELIMITERS.has(text.charCodeAt(at))) at++;
  return at;
}
