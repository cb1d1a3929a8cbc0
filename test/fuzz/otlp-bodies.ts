/*
 * Generators of OTLP trace request bodies for the fuzzer: OTLP/JSON and protobuf (written field by
 * field, so malformed and out-of-range ones are possible), attribute values nested at any depth,
 * counts around every limit, odd numbers (1e400, -0, 5e-324, 30-digit integers) and odd strings
 * (NUL, lone surrogates, empty keys), gzip or not, under each accepted content type.
 */
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import protobuf from 'protobufjs/minimal.js';
import { READ_ATTRIBUTES } from '../../lambdas/core/otlp/spans.ts';

/** A JSON number token JSON.stringify cannot write, kept as text until the body is written. */
const RAW = '\u0001RAW:';
const raw = (token: string) => `${RAW}${token}`;
const writeJson = (value: unknown) => JSON.stringify(value).replace(/"\\u0001RAW:([^"]*)"/g, '$1');

const now = Date.now();
const oddNumber = fc.oneof(
  fc.double(),
  fc.integer(),
  fc.constantFrom(1e300, -1e300, 1e-200, 5e-324, -0, 2 ** 53 + 1, 1e9, 1e9 + 1, -1),
  fc.constantFrom('1e400', '-1e400', '1e-400', '123456789012345678901234567890', '0.1e1').map(raw),
);
const oddString = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary' }),
  fc.constantFrom(
    '',
    '\u0000',
    'a\ud800b',
    '\udc00',
    '{"":1}',
    `${'['.repeat(40)}${']'.repeat(40)}`,
    '{"n":1e400}',
  ),
);
const key = fc.oneof(fc.constantFrom(...READ_ATTRIBUTES), oddString);
const nanos = fc.oneof(
  fc.integer({ min: 0, max: 120_000 }).map((ago) => `${BigInt(now - ago) * 1_000_000n}`),
  fc.constantFrom('0', '-1', '99999999999999999999', '4102444800000000000', 'soon').map(String),
  oddNumber,
);
const hexId = (bytes: number) =>
  fc.oneof(
    fc.uint8Array({ minLength: bytes, maxLength: bytes }).map((id) => Buffer.from(id).toString('hex')),
    fc.constantFrom('0'.repeat(bytes * 2), 'xyz', ''),
  );

/** An AnyValue, nested through arrays and key-value lists up to `depth` levels. */
const anyValue = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.record({ stringValue: oddString }),
    fc.record({ boolValue: fc.boolean() }),
    fc.record({ intValue: fc.oneof(oddNumber, fc.bigInt().map(String)) }),
    fc.record({ doubleValue: oddNumber }),
    fc.record({ bytesValue: fc.base64String() }),
    fc.record({ arrayValue: fc.record({ values: fc.array(tie('value'), { maxLength: 3 }) }) }),
    fc.record({
      kvlistValue: fc.record({ values: fc.array(fc.record({ key, value: tie('value') }), { maxLength: 3 }) }),
    }),
  ),
})).value;

const attributes = fc.array(fc.record({ key, value: anyValue }), { maxLength: 6 });
const event = fc.record({
  name: fc.constantFrom('gen_ai.evaluation.result', 'feature_flag.evaluation', 'exception', 'other'),
  timeUnixNano: nanos,
  attributes,
});
const span = fc.record(
  {
    traceId: fc.oneof(hexId(16), fc.constant('1'.repeat(32))),
    spanId: hexId(8),
    parentSpanId: fc.oneof(hexId(8), fc.constant('')),
    name: oddString,
    startTimeUnixNano: nanos,
    endTimeUnixNano: nanos,
    attributes,
    events: fc.array(event, { maxLength: 3 }),
    status: fc.record({ code: fc.oneof(fc.integer({ min: -1, max: 3 }), fc.string()), message: oddString }),
  },
  { requiredKeys: ['traceId', 'spanId'] },
);
/** A request of generated spans, or of many copies of one (counts around the limits). */
const requestOf = fc
  .oneof(
    fc.array(span, { maxLength: 8 }),
    fc
      .tuple(span, fc.constantFrom(128, 1_001, 10_000, 10_001))
      .map(([one, count]) => new Array(count).fill(one)),
  )
  .map((spans) => ({ resourceSpans: [{ resource: { attributes: [] }, scopeSpans: [{ spans }] }] }));

/** A value nested `levels` deep in an attribute: written as text, past what JSON.stringify can. */
const deepAttribute = fc
  .constantFrom(31, 32, 33, 129, 20_000)
  .map(
    (levels) =>
      `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"${'2'.repeat(32)}","spanId":"${'3'.repeat(16)}","attributes":[{"key":"input.value","value":${'{"arrayValue":{"values":['.repeat(levels - 1)}{"stringValue":"x"}${']}}'.repeat(levels - 1)}}]}]}]}]}`,
  );

// Protobuf, field by field from the same generated shapes (ids as bytes, times as fixed64).
type Json = Record<string, unknown>;
const text = (value: unknown) => (typeof value === 'string' ? value : (JSON.stringify(value) ?? ''));
function writeAnyValue(writer: protobuf.Writer, value: Json): void {
  const [field, inner] = Object.entries(value)[0] ?? [];
  if (field === 'stringValue') writer.uint32((1 << 3) | 2).string(text(inner));
  else if (field === 'boolValue') writer.uint32(2 << 3).bool(Boolean(inner));
  else if (field === 'intValue') writer.uint32(3 << 3).int64(Number(inner) || 0);
  else if (field === 'doubleValue') writer.uint32((4 << 3) | 1).double(Number(inner));
  else if (field === 'arrayValue' || field === 'kvlistValue') {
    writer.uint32(((field === 'arrayValue' ? 5 : 6) << 3) | 2).fork();
    for (const item of ((inner as Json).values ?? []) as Json[]) {
      writer.uint32((1 << 3) | 2).fork();
      if (field === 'arrayValue') writeAnyValue(writer, item);
      else writeKeyValue(writer, item);
      writer.ldelim();
    }
    writer.ldelim();
  }
}
function writeKeyValue(writer: protobuf.Writer, pair: Json): void {
  writer.uint32((1 << 3) | 2).string(text(pair.key));
  writer.uint32((2 << 3) | 2).fork();
  writeAnyValue(writer, pair.value as Json);
  writer.ldelim();
}
const bytesOf = (hex: unknown) =>
  Buffer.from(typeof hex === 'string' && /^([0-9a-f]{2})*$/.test(hex) ? hex : '', 'hex');
const fixed = (value: unknown) => {
  const number = Number(typeof value === 'string' && value.startsWith(RAW) ? value.slice(RAW.length) : value);
  return Number.isFinite(number) && number >= 0 ? number : 0;
};
function writeSpan(writer: protobuf.Writer, value: Json): void {
  writer.uint32((1 << 3) | 2).bytes(bytesOf(value.traceId));
  writer.uint32((2 << 3) | 2).bytes(bytesOf(value.spanId));
  if (value.parentSpanId !== undefined) writer.uint32((4 << 3) | 2).bytes(bytesOf(value.parentSpanId));
  writer.uint32((5 << 3) | 2).string(text(value.name ?? ''));
  writer.uint32((7 << 3) | 1).fixed64(fixed(value.startTimeUnixNano));
  writer.uint32((8 << 3) | 1).fixed64(fixed(value.endTimeUnixNano));
  for (const pair of (value.attributes ?? []) as Json[]) {
    writer.uint32((9 << 3) | 2).fork();
    writeKeyValue(writer, pair);
    writer.ldelim();
  }
  for (const item of (value.events ?? []) as Json[]) {
    writer.uint32((11 << 3) | 2).fork();
    writer.uint32((1 << 3) | 1).fixed64(fixed(item.timeUnixNano));
    writer.uint32((2 << 3) | 2).string(text(item.name));
    for (const pair of (item.attributes ?? []) as Json[]) {
      writer.uint32((3 << 3) | 2).fork();
      writeKeyValue(writer, pair);
      writer.ldelim();
    }
    writer.ldelim();
  }
}
function writeProtobuf(request: { resourceSpans: Array<{ scopeSpans: Array<{ spans: Json[] }> }> }): Buffer {
  const writer = protobuf.Writer.create();
  for (const resource of request.resourceSpans) {
    writer.uint32((1 << 3) | 2).fork();
    for (const scope of resource.scopeSpans) {
      writer.uint32((2 << 3) | 2).fork();
      for (const one of scope.spans) {
        writer.uint32((2 << 3) | 2).fork();
        writeSpan(writer, one);
        writer.ldelim();
      }
      writer.ldelim();
    }
    writer.ldelim();
  }
  return Buffer.from(writer.finish());
}

export interface OtlpBody {
  generator: string;
  contentType: string;
  gzip: boolean;
  body: Buffer;
}

/** A body and the generator it came from, in either encoding, gzipped or not, sometimes cut or flipped. */
export const otlpBody: fc.Arbitrary<OtlpBody> = fc
  .tuple(
    fc.oneof(
      {
        weight: 4,
        arbitrary: requestOf.map((request) => ({ generator: 'json', json: writeJson(request), request })),
      },
      {
        weight: 1,
        arbitrary: deepAttribute.map((json) => ({ generator: 'json nested', json, request: undefined })),
      },
    ),
    fc.constantFrom('application/json', 'application/x-protobuf', 'application/protobuf'),
    fc.boolean(),
    fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.nat() }),
  )
  .map(([{ generator, json, request }, contentType, gzip, damage]) => {
    const protobufBody = contentType !== 'application/json' && request !== undefined;
    let body = protobufBody
      ? writeProtobuf(request as Parameters<typeof writeProtobuf>[0])
      : Buffer.from(json);
    // A damaged body: cut short or one byte flipped, as a broken proxy or an attacker sends it.
    if (damage !== undefined && body.length > 0) {
      body = Buffer.from(body);
      if (damage % 2 === 0) body = body.subarray(0, damage % body.length);
      else body.writeUInt8((body.readUInt8(damage % body.length) ^ 0xff) & 0xff, damage % body.length);
    }
    return {
      generator: `${protobufBody ? 'protobuf' : generator}${damage !== undefined ? ' damaged' : ''}`,
      contentType,
      gzip,
      body: gzip ? gzipSync(body) : body,
    };
  });
