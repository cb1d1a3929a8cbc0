/*
 * Hostile OTLP requests: each gets a clear 4xx or a partial success naming what was refused, never
 * a 500, and nothing already stored is lost.
 */
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { protobufBody, recordingTracer, run } from '../../support/otlp-requests.ts';
import { executionsOf, newPipeline, post } from './harness.ts';

const json = (value: unknown) => Buffer.from(JSON.stringify(value));
const hex = (bytes: number, digit = 'a') => digit.repeat(bytes * 2);
const nanos = (ms: number) => `${BigInt(Math.round(ms)) * 1_000_000n}`;

/** An OTLP/JSON request of the given spans (one resource, one scope). */
const request = (spans: object[]) => ({
  resourceSpans: [{ resource: { attributes: [] }, scopeSpans: [{ spans }] }],
});
const span = (overrides: Record<string, unknown> = {}) => ({
  traceId: hex(16, '1'),
  spanId: hex(8, '2'),
  name: 'root',
  startTimeUnixNano: nanos(Date.now() - 5_000),
  endTimeUnixNano: nanos(Date.now() - 4_000),
  ...overrides,
});
const asJson = { contentType: 'application/json' };

/** A pipeline with one execution already stored, to show that nothing of it is lost. */
async function pipelineWithHistory() {
  const pipeline = await newPipeline();
  const tracer = recordingTracer();
  const traceId = run(tracer, pipeline.id, pipeline.activeConfigurationId, Date.now() - 60_000);
  await post(pipeline.id, protobufBody(tracer.spans()));
  const before = await executionsOf(pipeline.id);
  expect(before.map((execution) => execution.id)).toEqual([traceId]);
  return { pipeline, before };
}

describe('hostile OTLP requests', () => {
  it('answers 400 to an undecodable body in either encoding, and stores nothing', async () => {
    const { pipeline, before } = await pipelineWithHistory();
    const garbage = await post(pipeline.id, Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01]));
    const notJson = await post(pipeline.id, Buffer.from('{"resourceSpans": ['), asJson);
    const wrongShape = await post(pipeline.id, json({ resourceSpans: 'many' }), asJson);
    const otherType = await post(pipeline.id, Buffer.from('hello'), { contentType: 'text/plain' });

    for (const answer of [garbage, notJson, wrongShape, otherType]) {
      expect(answer.status).toBe(400);
      expect(answer.answer).toMatchObject({ error: 'VALIDATION_ERROR', message: expect.any(String) });
    }
    expect(await executionsOf(pipeline.id)).toEqual(before);
  });

  it('answers 413 naming the limit to a gzip bomb, and 400 to a broken gzip body', async () => {
    const { pipeline, before } = await pipelineWithHistory();
    const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024, 0x20));
    const inflated = await post(pipeline.id, bomb, { ...asJson, raw: true, gzip: true });
    const broken = await post(pipeline.id, Buffer.from([0x1f, 0x8b, 1, 2, 3]), {
      ...asJson,
      raw: true,
      gzip: true,
    });

    expect(inflated).toMatchObject({
      status: 413,
      answer: { error: 'PAYLOAD_TOO_LARGE', message: expect.stringContaining('32 MB') },
    });
    expect(broken).toMatchObject({ status: 400, answer: { error: 'VALIDATION_ERROR' } });
    expect(await executionsOf(pipeline.id)).toEqual(before);
  });

  it('refuses spans with ids of the wrong length or times in 1970 or next year in a partial success, and keeps the rest', async () => {
    const pipeline = await newPipeline();
    const nextYear = Date.now() + 366 * 86_400_000;
    const answer = await post(
      pipeline.id,
      json(
        request([
          span(),
          span({ traceId: hex(15), spanId: hex(8, '3') }),
          span({ traceId: hex(16, '4'), spanId: hex(4) }),
          span({ traceId: hex(16, '5'), startTimeUnixNano: nanos(1_000), endTimeUnixNano: nanos(2_000) }),
          span({
            traceId: hex(16, '6'),
            startTimeUnixNano: nanos(nextYear),
            endTimeUnixNano: nanos(nextYear + 1),
          }),
        ]),
      ),
      asJson,
    );

    expect(answer.status).toBe(200);
    expect(answer.answer).toEqual({
      partialSuccess: {
        rejectedSpans: 4,
        errorMessage: expect.stringMatching(
          /trace id must be 16 bytes.*span id must be 8 bytes.*between 2000-01-01 and 24 h from now/,
        ),
      },
    });
    expect((await executionsOf(pipeline.id)).map((execution) => execution.id)).toEqual([hex(16, '1')]);
  });

  it('accepts a span with a 1 MB attribute (it is not kept), and one whose 1 MB input is not kept', async () => {
    const pipeline = await newPipeline();
    const huge = 'x'.repeat(1024 * 1024);
    const answer = await post(
      pipeline.id,
      json(
        request([
          span({
            attributes: [
              { key: 'http.response.body', value: { stringValue: huge } },
              { key: 'input.value', value: { stringValue: huge } },
            ],
          }),
        ]),
      ),
      asJson,
    );

    expect(answer).toMatchObject({ status: 200, answer: {} });
    const [execution] = await executionsOf(pipeline.id);
    expect(execution).toMatchObject({ id: hex(16, '1'), status: 'succeeded' });
    expect(execution?.input).toBeUndefined();
  });

  it('reads 10,000 spans of one request (one trace), and refuses 10,001 whole with a 413 naming the limit, storing nothing', async () => {
    const pipeline = await newPipeline();
    const at = Date.now() - 10_000;
    const children = Array.from({ length: 10_000 }, (_, index) =>
      span({
        spanId: (index + 1).toString(16).padStart(16, '0'),
        parentSpanId: hex(8, 'f'),
        name: index % 2 ? 'retrieve' : 'tool call',
        startTimeUnixNano: nanos(at + 1),
        endTimeUnixNano: nanos(at + 2),
      }),
    );
    const root = span({ spanId: hex(8, 'f'), startTimeUnixNano: nanos(at), endTimeUnixNano: nanos(at + 50) });

    const over = await post(pipeline.id, json(request([root, ...children])), asJson);
    expect(over).toMatchObject({
      status: 413,
      answer: { error: 'PAYLOAD_TOO_LARGE', message: expect.stringContaining('at most 10000 spans') },
    });
    expect(await executionsOf(pipeline.id)).toEqual([]);

    const answer = await post(pipeline.id, json(request([root, ...children.slice(1)])), asJson);

    expect(answer).toMatchObject({ status: 200, answer: {} });
    const [execution] = await executionsOf(pipeline.id);
    expect(execution).toMatchObject({
      durationMs: 50,
      slotResults: [{ slotId: 'retrieve', status: 'succeeded' }],
    });
  }, 60_000);

  it('keeps a trace id sent to another pipeline apart: each pipeline has its own execution, the first unchanged', async () => {
    const { pipeline, before } = await pipelineWithHistory();
    const other = await newPipeline();
    const traceId = before[0]?.id ?? '';
    const failing = span({ traceId, spanId: hex(8, '9'), status: { code: 2, message: 'boom' } });

    const answer = await post(other.id, json(request([failing])), asJson);

    expect(answer).toMatchObject({ status: 200, answer: {} });
    expect(await executionsOf(pipeline.id)).toEqual(before);
    expect((await executionsOf(other.id)).map((execution) => [execution.id, execution.status])).toEqual([
      [traceId, 'failed'],
    ]);
  });
});
