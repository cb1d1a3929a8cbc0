import { describe, expect, it } from 'vitest';
import { decodeJson, decodeProtobuf } from '../../../lambdas/otlp/decode.ts';
import { jsonBody, protobufBody, recordingTracer } from '../../support/otlp-requests.ts';

/** One span made and serialized by the OpenTelemetry SDK, starting and ending at these milliseconds. */
function spanAt(start: number, end: number) {
  const tracer = recordingTracer();
  tracer.close(tracer.open({ name: 'answer-question', start, end }), { end });
  return tracer.spans();
}

describe('decoding OTLP times', () => {
  // Times on a whole millisecond, as an SDK on a millisecond clock gives them: in nanoseconds they
  // are past 2^53, where a double (protobufjs decodes 64-bit fields as numbers) loses up to 128 ns.
  const starts = [1_764_291_747_010, 1_764_291_747_999, 1_800_000_000_001, 1_764_291_747_123];

  it('keeps every whole millisecond of a protobuf request exactly', () => {
    for (const start of starts) {
      const [span] = decodeProtobuf(protobufBody(spanAt(start, start + 900))).spans;
      expect(span?.startMs).toBe(start);
      expect(span?.endMs).toBe(start + 900);
    }
  });

  it('reads the same times from the JSON encoding', () => {
    for (const start of starts) {
      const [span] = decodeJson(jsonBody(spanAt(start, start + 900)).toString('utf8')).spans;
      expect(span?.startMs).toBe(start);
    }
  });
});
