/*
 * Reading back what traces and the JSON endpoints recorded: GET …/executions (newest first, paged,
 * by status and configuration), GET …/executions/{id} (slots, source, the signals citing it) and
 * GET …/signals (paged, by kind and slot).
 */
import { describe, expect, it } from 'vitest';
import { protobufBody, recordingTracer, run } from '../../support/otlp-requests.ts';
import { apiEvent, type HttpLambda, invoke } from '../api/harness.ts';
import { admin, http, newPipeline, post } from './harness.ts';

const call = (
  entry: string,
  resource: string,
  pathParameters: Record<string, string>,
  extra: { query?: Record<string, string>; body?: object; method?: string } = {},
) =>
  invoke(
    http[entry] as HttpLambda,
    apiEvent({
      method: extra.method ?? 'GET',
      resource,
      pathParameters,
      principal: admin.principal,
      ...(extra.query ? { query: extra.query } : {}),
      ...(extra.body ? { body: extra.body } : {}),
    }),
  );

/** A pipeline with three traced executions (the middle one failed) and one recorded through the API. */
async function pipelineWithHistory() {
  const pipeline = await newPipeline();
  const tracer = recordingTracer();
  const now = Date.now();
  const traced = [
    run(tracer, pipeline.id, pipeline.activeConfigurationId, now - 90_000),
    run(tracer, pipeline.id, pipeline.activeConfigurationId, now - 80_000, true),
    run(tracer, pipeline.id, pipeline.activeConfigurationId, now - 70_000),
  ];
  await post(pipeline.id, protobufBody(tracer.spans()));
  const recorded = await call(
    'record-executions',
    '/pipelines/{pipelineId}/executions',
    { pipelineId: pipeline.id },
    {
      method: 'POST',
      body: {
        executions: [
          {
            id: 'api-run-1',
            status: 'succeeded',
            durationMs: 5,
            startedAt: new Date(now - 60_000).toISOString(),
          },
        ],
      },
    },
  );
  expect(recorded.status).toBe(201);
  return { pipeline, traced };
}

describe('reading executions and signals back', () => {
  it('lists executions newest first, page by page, and by status', async () => {
    const { pipeline, traced } = await pipelineWithHistory();
    const list = (query: Record<string, string>) =>
      call('list-executions', '/pipelines/{pipelineId}/executions', { pipelineId: pipeline.id }, { query });

    const first = await list({ limit: '2' });
    const second = await list({ limit: '2', cursor: first.body.nextCursor });
    const failed = await list({ status: 'failed' });

    expect(first.body.items.map((execution: { id: string }) => execution.id)).toEqual([
      'api-run-1',
      traced[2],
    ]);
    expect(second.body.items.map((execution: { id: string }) => execution.id)).toEqual([
      traced[1],
      traced[0],
    ]);
    // The shards are read one item past a page: a page ending at the last item says it is the last.
    expect(first.body.nextCursor).toEqual(expect.any(String));
    expect(second.body.nextCursor).toBeNull();
    expect(failed.body.items.map((execution: { id: string }) => execution.id)).toEqual([traced[1]]);
    expect((await list({ configurationId: 'another' })).body.items).toEqual([]);
    expect((await list({ status: 'maybe' })).status).toBe(400);
    expect((await list({ cursor: 'not-a-cursor' })).status).toBe(400);
  });

  it('shows one execution with its slots, its source and the signals citing it', async () => {
    const { pipeline, traced } = await pipelineWithHistory();
    const get = (executionId: string) =>
      call('get-execution', '/pipelines/{pipelineId}/executions/{executionId}', {
        pipelineId: pipeline.id,
        executionId,
      });

    const shown = await get(traced[1] as string);
    const api = await get('api-run-1');

    expect(shown.status).toBe(200);
    expect(shown.body.execution).toMatchObject({
      id: traced[1],
      source: 'otlp',
      status: 'failed',
      slotResults: [{ slotId: 'retrieve' }, { slotId: 'answer-model', status: 'failed' }],
    });
    expect(shown.body.signals.map((signal: { kind: string }) => signal.kind).sort()).toEqual([
      'error',
      'relevance',
    ]);
    expect(api.body).toMatchObject({ execution: { id: 'api-run-1', source: 'api' }, signals: [] });
    expect((await get('nope')).status).toBe(404);
  });

  it('lists signals by kind and slot', async () => {
    const { pipeline, traced } = await pipelineWithHistory();
    const list = (query: Record<string, string>) =>
      call('list-signals', '/pipelines/{pipelineId}/signals', { pipelineId: pipeline.id }, { query });

    const all = await list({});
    const errors = await list({ kind: 'error' });
    const ofSlot = await list({ slotId: 'answer-model' });

    expect(all.body.items).toHaveLength(4);
    expect(errors.body.items.map((signal: { executionId: string }) => signal.executionId)).toEqual([
      traced[1],
    ]);
    expect(ofSlot.body.items).toEqual(errors.body.items);
    expect((await list({ kind: 'Not A Kind' })).status).toBe(400);
  });

  it('lists signals by severity and by a window of their times, refusing a window that ends before it starts', async () => {
    const { pipeline, traced } = await pipelineWithHistory();
    const list = (query: Record<string, string>) =>
      call('list-signals', '/pipelines/{pipelineId}/signals', { pipelineId: pipeline.id }, { query });
    const all = (await list({})).body.items as Array<{
      executionId: string;
      occurredAt: string;
      severity: string;
    }>;
    expect(all).toHaveLength(4);
    const severities = [...new Set(all.map((signal) => signal.severity))];
    for (const severity of severities) {
      const only = (await list({ severity })).body.items as typeof all;
      expect(only.length).toBeGreaterThan(0);
      expect(only).toEqual(all.filter((signal) => signal.severity === severity));
    }
    expect(severities.length).toBeGreaterThan(1);

    // The middle execution's signals only: a window from its start, ending before the third's.
    const times = all.map((signal) => signal.occurredAt).sort();
    const middle = all.filter((signal) => signal.executionId === traced[1]);
    const from = middle.map((signal) => signal.occurredAt).sort()[0] as string;
    const to = middle
      .map((signal) => signal.occurredAt)
      .sort()
      .at(-1) as string;
    // Written to the second, as people write times: it means the same instant as with milliseconds.
    const fromSecond = `${from.slice(0, 19)}Z`;
    const window = (await list({ since: fromSecond, until: to })).body.items as typeof all;
    expect(window.map((signal) => signal.occurredAt).sort()).toEqual(
      times.filter((time) => time >= new Date(fromSecond).toISOString() && time <= to),
    );
    expect(window.some((signal) => signal.executionId === traced[1])).toBe(true);
    expect(window.length).toBeLessThan(all.length);

    const backwards = await list({ since: to, until: from === to ? '2000-01-01T00:00:00Z' : from });
    expect(backwards.status).toBe(400);
    expect(backwards.body.message).toMatch(/^since \(.+\) is after until \(.+\)\.$/);
    expect((await list({ since: 'yesterday' })).status).toBe(400);
    expect((await list({ severity: 'loud' })).status).toBe(400);
  });
});
