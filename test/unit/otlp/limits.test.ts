/**
 * The bombs of the security review, decoded as the ingest decodes them: each is refused with a 413
 * naming the limit (or a 400 for nesting) while it is read, and spans whose values could never be
 * stored are refused one by one with the reason, the rest kept.
 */
import { gzipSync } from 'node:zlib';
import protobuf from 'protobufjs/minimal.js';
import { describe, expect, it } from 'vitest';
import { PayloadTooLargeError, ValidationError } from '../../../lambdas/core/errors.ts';
import { isBinaryMediaType } from '../../../lambdas/http/binary-media.ts';
import { bodyOf, decodeRequest, encodingOf } from '../../../lambdas/otlp/http.ts';
import { TRACE_LIMITS } from '../../../lambdas/otlp/limits.ts';
import { jsonBody, protobufBody, recordingTracer } from '../../support/otlp-requests.ts';

/** A protobuf message of length-delimited fields (each a field number and its bytes). */
function message(fields: Array<[number, Uint8Array | string]>): Uint8Array {
  const writer = protobuf.Writer.create();
  for (const [field, value] of fields) {
    writer.uint32((field << 3) | 2);
    if (typeof value === 'string') writer.string(value);
    else writer.bytes(value);
  }
  return writer.finish();
}
/** A request of one resource and one scope holding these span messages. */
const request = (spans: Uint8Array[]) =>
  message([[1, message([[2, message(spans.map((span): [number, Uint8Array] => [2, span]))]])]]);

/** The parts of API Gateway's event the transport reads. */
type Event = Parameters<typeof bodyOf>[0];
const asEvent = (parts: Pick<Event, 'headers' | 'body' | 'isBase64Encoded'>) => parts as Event;
const gzipEvent = (body: Uint8Array, contentType = 'application/x-protobuf') =>
  asEvent({
    headers: { 'content-type': contentType, 'content-encoding': 'gzip' },
    body: gzipSync(body).toString('base64'),
    isBase64Encoded: true,
  });
const decodeEvent = (event: ReturnType<typeof gzipEvent>) => decodeRequest(bodyOf(event), encodingOf(event));

const refusal = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    return error;
  }
  return undefined;
};

const now = Date.now();
const nanos = (ms: number) => `${BigInt(ms) * 1_000_000n}`;
/** An OTLP/JSON span whose ids and times are valid, with these fields. */
const jsonSpan = (spanId: string, fields: Record<string, unknown> = {}) => ({
  traceId: '1'.repeat(32),
  spanId: spanId.padStart(16, '0'),
  name: 'root',
  startTimeUnixNano: nanos(now - 2_000),
  endTimeUnixNano: nanos(now - 1_000),
  ...fields,
});
const jsonRequest = (spans: unknown[]) => JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans }] }] });
const attribute = (key: string, value: unknown) => ({ key, value });
/** A request of one span whose attribute's AnyValue nests `levels` deep (written as text: JSON.stringify would overflow). */
const nestedJson = (levels: number) =>
  jsonRequest([jsonSpan('1', { attributes: [attribute('pipeline.slot', 'NESTED')] })]).replace(
    '"NESTED"',
    `${'{"arrayValue":{"values":['.repeat(levels - 1)}{"stringValue":"x"}${']}}'.repeat(levels - 1)}`,
  );
function nestedProtobuf(levels: number): Uint8Array {
  let value = message([[1, 'x']]);
  for (let level = 1; level < levels; level++) value = message([[5, message([[1, value]])]]);
  return value;
}
const protobufSpan = (attributes: Uint8Array[]) =>
  message(attributes.map((pair): [number, Uint8Array] => [9, pair]));

describe('OTLP bombs, refused while they are read', () => {
  it('refuses 9.8 KB of gzip that inflates to 5,000,000 empty protobuf spans with a 413 naming the limit', () => {
    const spans = Buffer.alloc(5_000_000 * 2);
    for (let at = 0; at < spans.length; at += 2) spans[at] = 0x12; // field 2, length 0
    const body = message([[1, message([[2, spans]])]]);
    const event = gzipEvent(body);
    expect(Buffer.from(event.body ?? '', 'base64').length).toBeLessThan(30_000);

    const error = refusal(() => decodeEvent(event));

    expect(error).toBeInstanceOf(PayloadTooLargeError);
    expect((error as Error).message).toContain(`at most ${TRACE_LIMITS.records} spans`);
  });

  it('refuses a gzip JSON body of 2,000,000 {} spans, and as many {} anywhere else, with a 413', () => {
    const empties = new Array(2_000_000).fill('{}').join(',');
    const asSpans = `{"resourceSpans":[{"scopeSpans":[{"spans":[${empties}]}]}]}`;
    const elsewhere = `{"resourceSpans":[{"unknown":[${empties},${empties}]}]}`;

    for (const [text, limit] of [
      [asSpans, 'spans'],
      [elsewhere, 'values'],
    ]) {
      const error = refusal(() => decodeEvent(gzipEvent(Buffer.from(text as string), 'application/json')));
      expect(error).toBeInstanceOf(PayloadTooLargeError);
      expect((error as Error).message).toContain(`${limit}`);
    }
  });

  it('stops inflating a gzip body at the first limit its first bytes pass, before the 32 MB of the whole', () => {
    // 20,000,000 empty spans: 40 MB inflated, past the 32 MB a body may inflate to.
    const spans = Buffer.alloc(20_000_000 * 2);
    for (let at = 0; at < spans.length; at += 2) spans[at] = 0x12;
    const protobufBomb = gzipEvent(message([[1, message([[2, spans]])]]));
    const jsonBomb = gzipEvent(
      Buffer.from(
        `{"resourceSpans":[{"scopeSpans":[{"spans":[${new Array(12_000_000).fill('{}').join(',')}]}]}]}`,
      ),
      'application/json',
    );
    const deepBomb = gzipEvent(
      Buffer.from(`${nestedJson(40)}${' '.repeat(40 * 1024 * 1024)}`),
      'application/json',
    );

    for (const bomb of [protobufBomb, jsonBomb]) {
      const error = refusal(() => decodeEvent(bomb));
      expect(error).toBeInstanceOf(PayloadTooLargeError);
      expect((error as Error).message).toContain(`at most ${TRACE_LIMITS.records} spans`);
    }
    const deep = refusal(() => decodeEvent(deepBomb));
    expect(deep).toBeInstanceOf(ValidationError);
    expect((deep as Error).message).toBe('An attribute value is nested deeper than 32 levels.');
  });

  it('takes a gzip body whose first inflated bytes cut a span, a value or a string in two', () => {
    const tracer = recordingTracer();
    const at = Date.now() - 60_000;
    const root = tracer.open({
      name: 'answer-question',
      start: at,
      end: at + 900,
      attributes: { 'input.value': JSON.stringify({ question: 'q'.repeat(20_000) }) },
    });
    tracer.close(root, { end: at + 900 });
    for (let child = 0; child < 400; child++) {
      const span = tracer.open({
        name: `retrieve ${child}`,
        parent: root,
        start: at + child,
        end: at + child + 1,
      });
      tracer.close(span, { end: at + child + 1 });
    }
    for (const [body, type] of [
      [protobufBody(tracer.spans()), 'application/x-protobuf'],
      [jsonBody(tracer.spans()), 'application/json'],
    ] as const) {
      expect(decodeEvent(gzipEvent(body, type)).spans).toHaveLength(401);
    }
  });

  it('refuses an attribute value nested 20,000 deep with a 400, and takes one 32 deep', () => {
    for (const levels of [33, 20_000]) {
      const json = nestedJson(levels);
      const proto = request([
        protobufSpan([
          message([
            [1, 'pipeline.slot'],
            [2, nestedProtobuf(levels)],
          ]),
        ]),
      ]);
      for (const error of [
        refusal(() => decodeRequest(Buffer.from(json), 'json')),
        refusal(() => decodeRequest(Buffer.from(proto), 'protobuf')),
      ]) {
        expect(error).toBeInstanceOf(ValidationError);
        expect((error as Error).message).toBe('An attribute value is nested deeper than 32 levels.');
      }
    }
    expect(decodeRequest(Buffer.from(nestedJson(32)), 'json').spans).toHaveLength(1);
    const within = request([
      protobufSpan([
        message([
          [1, 'pipeline.slot'],
          [2, nestedProtobuf(32)],
        ]),
      ]),
    ]);
    expect(refusal(() => decodeRequest(Buffer.from(within), 'protobuf'))).not.toBeInstanceOf(ValidationError);
  });

  it('refuses a span with 129 attributes or 129 events with a 413, and takes 128 of each', () => {
    const attributes = (count: number) =>
      Array.from({ length: count }, (_, index) => attribute(`a${index}`, { intValue: index }));
    const events = (count: number) =>
      Array.from({ length: count }, () => ({ name: 'e', timeUnixNano: nanos(now - 1_500) }));
    for (const fields of [{ attributes: attributes(129) }, { events: events(129) }]) {
      const error = refusal(() => decodeRequest(Buffer.from(jsonRequest([jsonSpan('1', fields)])), 'json'));
      expect(error).toBeInstanceOf(PayloadTooLargeError);
      expect((error as Error).message).toMatch(/at most 128/);
    }
    const within = jsonSpan('1', { attributes: attributes(128), events: events(128) });
    expect(decodeRequest(Buffer.from(jsonRequest([within])), 'json').spans).toHaveLength(1);
  });

  it("answers a broken protobuf body in its own words, never protobufjs's", () => {
    for (const garbage of [[0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01], [0x0f], [0x0a, 0x05, 0x12]]) {
      const error = refusal(() => decodeRequest(Buffer.from(garbage), 'protobuf'));
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as Error).message).toBe('The body is not an OTLP ExportTraceServiceRequest in protobuf.');
    }
  });

  it('takes application/protobuf as protobuf, and as a binary media type (base64 through API Gateway)', () => {
    const tracer = recordingTracer();
    tracer.close(tracer.open({ name: 'root', start: now - 2_000, end: now - 1_000 }), { end: now - 1_000 });
    const event = asEvent({
      headers: { 'content-type': 'application/protobuf' },
      body: protobufBody(tracer.spans()).toString('base64'),
      isBase64Encoded: isBinaryMediaType('application/protobuf'),
    });

    expect(event.isBase64Encoded).toBe(true);
    expect(decodeRequest(bodyOf(event), encodingOf(event)).spans).toHaveLength(1);
    expect(decodeRequest(jsonBody(tracer.spans()), 'json').spans).toHaveLength(1);
  });
});

describe('spans whose values could never be stored', () => {
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    [
      'input tokens above 10^9',
      { attributes: [attribute('gen_ai.usage.input_tokens', { intValue: '10000000000' })] },
      /token counts/,
    ],
    [
      'negative output tokens',
      { attributes: [attribute('gen_ai.usage.output_tokens', { intValue: -1 })] },
      /token counts/,
    ],
    ['a NUL in its name', { name: 'ro\u0000ot' }, /NUL character or an unpaired surrogate/],
    [
      'a lone surrogate in an attribute',
      { attributes: [attribute('pipeline.slot', { stringValue: 'a\ud800b' })] },
      /unpaired surrogate/,
    ],
    [
      'an input with an empty key',
      { attributes: [attribute('input.value', { stringValue: '{"":1}' })] },
      /input.value.*empty key/,
    ],
    [
      'an input 33 levels deep',
      { attributes: [attribute('input.value', { stringValue: `${'['.repeat(33)}${']'.repeat(33)}` })] },
      /input.value.*nested deeper/,
    ],
    [
      'an input holding 1e400',
      { attributes: [attribute('input.value', { stringValue: '{"n":1e400}' })] },
      /input.value.*number that cannot be stored/,
    ],
    ...[1e300, 1e-200].map((score): [string, Record<string, unknown>, RegExp] => [
      `an evaluation score of ${score}`,
      {
        events: [
          {
            name: 'gen_ai.evaluation.result',
            timeUnixNano: nanos(now - 1_500),
            attributes: [attribute('gen_ai.evaluation.score.value', { doubleValue: score })],
          },
        ],
      },
      /evaluation score/,
    ]),
  ];

  it.each(cases)('refuses a span with %s, naming why, and keeps the others', (_, fields, reason) => {
    const decoded = decodeRequest(
      Buffer.from(jsonRequest([jsonSpan('1'), jsonSpan('2', fields), jsonSpan('3')])),
      'json',
    );

    expect(decoded.spans.map((span) => span.spanId)).toEqual(['0000000000000001', '0000000000000003']);
    expect(decoded.rejected).toBe(1);
    expect([...decoded.reasons].join('; ')).toMatch(reason);
  });
});
