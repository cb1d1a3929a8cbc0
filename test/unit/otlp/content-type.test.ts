/**
 * OTLP/HTTP's protobuf arrives under either media type: `application/x-protobuf` (what the
 * OpenTelemetry exporters send) and `application/protobuf` (the registered one, which some
 * exporters and proxies send). Both are protobuf, gzipped or not, with or without parameters.
 */
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../../lambdas/core/errors.ts';
import { isBinaryMediaType } from '../../../lambdas/http/binary-media.ts';
import { bodyOf, decodeRequest, encodingOf, exportResponse } from '../../../lambdas/otlp/http.ts';
import { protobufBody, recordingTracer } from '../../support/otlp-requests.ts';

type Event = Parameters<typeof bodyOf>[0];

function body() {
  const tracer = recordingTracer();
  const start = Date.now() - 5_000;
  const span = tracer.open({ name: 'answer-question', start, end: start + 900 });
  tracer.close(span, { end: start + 900 });
  return protobufBody(tracer.spans());
}

const eventOf = (contentType: string, bytes: Buffer, gzip = false) =>
  ({
    headers: { 'Content-Type': contentType, ...(gzip ? { 'Content-Encoding': 'gzip' } : {}) },
    body: (gzip ? gzipSync(bytes) : bytes).toString('base64'),
    isBase64Encoded: true,
  }) as unknown as Event;

const decoded = (event: Event) => decodeRequest(bodyOf(event), encodingOf(event));

describe('Content-Type: application/protobuf', () => {
  const bytes = body();
  const expected = decoded(eventOf('application/x-protobuf', bytes)).spans;

  it('is decoded as protobuf, the same spans as application/x-protobuf', () => {
    expect(expected).toHaveLength(1);
    for (const type of [
      'application/protobuf',
      'Application/Protobuf',
      'application/protobuf; charset=binary',
    ]) {
      const event = eventOf(type, bytes);
      expect(encodingOf(event), type).toBe('protobuf');
      expect(decoded(event).spans, type).toEqual(expected);
      expect(decoded(eventOf(type, bytes, true)).spans, `${type}, gzip`).toEqual(expected);
    }
  });

  it('reaches the function as base64 (a binary media type), and is answered in protobuf', () => {
    expect(isBinaryMediaType('application/protobuf')).toBe(true);
    const answer = exportResponse(encodingOf(eventOf('application/protobuf', bytes)), 0, []);
    expect(answer).toMatchObject({ statusCode: 200, isBase64Encoded: true });
    expect(answer.headers?.['content-type']).toBe('application/x-protobuf');
  });

  it('is named, with the other accepted types, when a request has another type', () => {
    let refusal: unknown;
    try {
      encodingOf(eventOf('application/octet-stream', bytes));
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(ValidationError);
    expect((refusal as Error).message).toMatch(
      /application\/x-protobuf.*application\/protobuf.*application\/json/,
    );
  });
});
