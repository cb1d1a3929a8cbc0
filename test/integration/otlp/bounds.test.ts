/*
 * What one OTLP request may store and what its records must be, on DynamoDB Local: a request past
 * the write bounds is refused whole before anything is written; a span whose values the JSON
 * endpoints would refuse is refused alone (counted, with the reason) and the rest kept; an
 * evaluation dated past tomorrow is refused; a trace never adds to an API execution of its id; and
 * an execution stored before these checks is readable.
 */
import { describe, expect, it } from 'vitest';
import { WRITE_BOUNDS } from '../../../lambdas/core/otlp/spans.ts';
import { apiEvent, type HttpLambda, invoke, lambdaContext } from '../api/harness.ts';
import { admin, executionsOf, http, newPipeline, post, repository, signalsOf } from './harness.ts';

const json = (value: unknown) => Buffer.from(JSON.stringify(value));
const asJson = { contentType: 'application/json' };
const nanos = (ms: number) => `${BigInt(Math.round(ms)) * 1_000_000n}`;
const id = (value: number, digits: number) => value.toString(16).padStart(digits, '0');
const request = (spans: object[]) => ({ resourceSpans: [{ scopeSpans: [{ spans }] }] });
const at = Date.now() - 60_000;
const span = (trace: number, spanId: number, fields: Record<string, unknown> = {}) => ({
  traceId: id(trace, 32),
  spanId: id(spanId, 16),
  name: 'root',
  startTimeUnixNano: nanos(at),
  endTimeUnixNano: nanos(at + 100),
  ...fields,
});
const attribute = (key: string, value: object) => ({ key, value });
const evaluation = (score: number, atMs = at + 50) => ({
  name: 'gen_ai.evaluation.result',
  timeUnixNano: nanos(atMs),
  attributes: [
    attribute('gen_ai.evaluation.name', { stringValue: 'relevance' }),
    attribute('gen_ai.evaluation.score.value', { doubleValue: score }),
  ],
});
const child = (trace: number, spanId: number, fields: Record<string, unknown>) =>
  span(trace, spanId, { parentSpanId: id(1, 16), name: 'answer-model', ...fields });

const get = (entry: string, resource: string, pathParameters: Record<string, string>) =>
  invoke(
    http[entry] as HttpLambda,
    apiEvent({ method: 'GET', resource, pathParameters, principal: admin.principal }),
  );

describe('what one OTLP request may store', () => {
  it(`refuses ${WRITE_BOUNDS.traces + 1} traces in one request with a 413 naming the bound, storing nothing`, async () => {
    const pipeline = await newPipeline();
    const spans = Array.from({ length: WRITE_BOUNDS.traces + 1 }, (_, trace) => span(trace + 1, 1));

    const answer = await post(pipeline.id, json(request(spans)), asJson);

    expect(answer).toMatchObject({
      status: 413,
      answer: {
        error: 'PAYLOAD_TOO_LARGE',
        message: expect.stringContaining(`at most ${WRITE_BOUNDS.traces} traces`),
      },
    });
    expect(await executionsOf(pipeline.id)).toEqual([]);
  });

  it(`refuses more than ${WRITE_BOUNDS.signals} evaluations in one request with a 413, storing nothing`, async () => {
    const pipeline = await newPipeline();
    const children = Array.from({ length: 21 }, (_, index) =>
      child(1, index + 2, { events: Array.from({ length: 100 }, () => evaluation(0.9)) }),
    );

    const answer = await post(pipeline.id, json(request([span(1, 1), ...children])), asJson);

    expect(answer).toMatchObject({
      status: 413,
      answer: { message: expect.stringContaining('2100 signals') },
    });
    expect(await executionsOf(pipeline.id)).toEqual([]);
    expect(await signalsOf(pipeline.id)).toEqual([]);
  });

  it('refuses a request whose spans would stage more than 8 MB with a 413 (gzip inflates 50 KB to it), storing nothing', async () => {
    const pipeline = await newPipeline();
    const text = { stringValue: 'x'.repeat(4096) };
    // Each span about 285 KB as read (within the 300 KB a span may be): feature-flag events, read whole.
    const flags = Array.from({ length: 23 }, () => ({
      name: 'feature_flag.evaluation',
      timeUnixNano: nanos(at + 10),
      attributes: ['feature_flag.key', 'feature_flag.result.variant', 'feature_flag.variant'].map((key) =>
        attribute(key, text),
      ),
    }));
    const spans = Array.from({ length: 30 }, (_, index) => child(1, index + 2, { events: flags }));

    const answer = await post(pipeline.id, json(request([span(1, 1), ...spans])), { ...asJson, gzip: true });

    expect(answer).toMatchObject({
      status: 413,
      answer: { message: expect.stringMatching(/MB of spans as read; at most 8 MB/) },
    });
    expect(await executionsOf(pipeline.id)).toEqual([]);
  });
});

describe('records a trace gives pass the JSON endpoints’ rules', () => {
  it('refuses the span with 10^10 tokens and the one with a score of 1e300, counts them with the reasons, keeps the rest', async () => {
    const pipeline = await newPipeline();
    const good = [span(1, 1, { events: [evaluation(0.9)] })];
    const tokens = [
      span(2, 1),
      child(2, 2, { attributes: [attribute('gen_ai.usage.input_tokens', { intValue: '10000000000' })] }),
    ];
    const score = [span(3, 1), child(3, 2, { events: [evaluation(1e300), evaluation(0.2)] })];

    const answer = await post(pipeline.id, json(request([...good, ...tokens, ...score])), asJson);

    expect(answer.status).toBe(200);
    expect(answer.answer).toEqual({
      partialSuccess: {
        rejectedSpans: 2,
        errorMessage: expect.stringMatching(/token counts.*evaluation score|evaluation score.*token counts/),
      },
    });
    expect((await executionsOf(pipeline.id)).map((execution) => execution.id).sort()).toEqual([
      id(1, 32),
      id(2, 32),
      id(3, 32),
    ]);
    expect((await signalsOf(pipeline.id)).map((signal) => signal.executionId)).toEqual([id(1, 32)]);

    // A later request of the same trace is not held back by the span refused before.
    const later = await post(
      pipeline.id,
      json(request([child(3, 3, { events: [evaluation(0.3)] })])),
      asJson,
    );
    expect(later).toMatchObject({ status: 200, answer: {} });
    expect((await signalsOf(pipeline.id)).map((signal) => signal.executionId).sort()).toEqual([
      id(1, 32),
      id(3, 32),
    ]);
  });

  it('refuses a span whose evaluation is dated 2100 (or before 2000), keeping the rest', async () => {
    const pipeline = await newPipeline();
    const future = Date.parse('2100-01-01T00:00:00Z');

    const answer = await post(
      pipeline.id,
      json(
        request([
          span(1, 1),
          child(1, 2, { events: [evaluation(0.1, future)] }),
          child(1, 3, { events: [evaluation(0.1, 1_000)] }),
        ]),
      ),
      asJson,
    );

    expect(answer.answer).toEqual({
      partialSuccess: {
        rejectedSpans: 2,
        errorMessage: expect.stringContaining('event times must be between 2000-01-01 and 24 h from now'),
      },
    });
    expect((await executionsOf(pipeline.id)).map((execution) => execution.id)).toEqual([id(1, 32)]);
    expect(await signalsOf(pipeline.id)).toEqual([]);
  });

  it('never adds a trace’s signals to, or changes, an execution recorded through the API with the same id', async () => {
    const pipeline = await newPipeline();
    const traceId = id(7, 32);
    const recorded = await invoke(
      http['record-executions'] as HttpLambda,
      apiEvent({
        method: 'POST',
        resource: '/pipelines/{pipelineId}/executions',
        pathParameters: { pipelineId: pipeline.id },
        body: { executions: [{ id: traceId, status: 'succeeded', durationMs: 5 }] },
        principal: admin.principal,
      }),
    );
    expect(recorded.status).toBe(201);
    const before = await executionsOf(pipeline.id);

    const failing = span(7, 1, { status: { code: 2, message: 'boom' }, events: [evaluation(0.1)] });
    const answer = await post(pipeline.id, json(request([failing])), asJson);

    expect(answer.answer).toEqual({
      partialSuccess: {
        rejectedSpans: 1,
        errorMessage: expect.stringContaining('recorded through POST …/executions'),
      },
    });
    expect(await executionsOf(pipeline.id)).toEqual(before);
    expect(await signalsOf(pipeline.id)).toEqual([]);
  });

  it('reads an execution stored with 5 × 10^9 tokens (before the check) in the listing, alone and in the export', async () => {
    const pipeline = await newPipeline();
    const stored = {
      id: id(9, 32),
      pipelineId: pipeline.id,
      configurationId: pipeline.activeConfigurationId,
      status: 'succeeded' as const,
      durationMs: 10,
      startedAt: new Date(at).toISOString(),
      slotResults: [
        {
          slotId: 'answer-model',
          status: 'succeeded' as const,
          durationMs: 5,
          inputTokens: 5e9,
          outputTokens: 7,
        },
      ],
    };
    await repository().recordExecutions([stored], 30, null);
    const params = { pipelineId: pipeline.id, executionId: stored.id };

    const one = await get('get-execution', '/pipelines/{pipelineId}/executions/{executionId}', params);
    const listed = await get('list-executions', '/pipelines/{pipelineId}/executions', params);
    const exported = await (http['export-pipeline'] as HttpLambda)(
      apiEvent({
        method: 'GET',
        resource: '/pipelines/{pipelineId}/export',
        pathParameters: params,
        principal: admin.principal,
      }),
      lambdaContext(),
    );

    expect(one.status).toBe(200);
    expect(one.body.execution.slotResults).toEqual([
      { slotId: 'answer-model', status: 'succeeded', durationMs: 5, inputTokens: 5e9, outputTokens: 7 },
    ]);
    expect(listed.status).toBe(200);
    expect(listed.body.items.map((execution: { id: string }) => execution.id)).toEqual([stored.id]);
    expect(exported.statusCode).toBe(200);
    expect(exported.body).toContain(stored.id);
  });
});
