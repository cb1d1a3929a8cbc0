/*
 * POST …/otlp/v1/traces through its handler on DynamoDB Local, with requests the OpenTelemetry SDK
 * serializes itself: both encodings, gzip, spans in pieces and out of order, retries, and the
 * mapping of a trace to its execution and signals.
 */
import { gunzipSync } from 'node:zlib';
import { PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { tracePartition } from '../../../lambdas/store/trace-keys.ts';
import { jsonBody, protobufBody, recordingTracer, run } from '../../support/otlp-requests.ts';
import { db, executionsOf, names, newPipeline, post, signalsOf } from './harness.ts';

describe('POST /pipelines/{pipelineId}/otlp/v1/traces', () => {
  it('makes a protobuf trace an execution with its slots, configuration, input and signals, answered in protobuf', async () => {
    const pipeline = await newPipeline();
    const tracer = recordingTracer();
    const at = Date.now() - 60_000;
    const traceId = run(tracer, pipeline.id, pipeline.activeConfigurationId, at, true);

    const answer = await post(pipeline.id, protobufBody(tracer.spans()));

    expect(answer).toMatchObject({ status: 200, type: 'application/x-protobuf' });
    // Absent: the serializer gives undefined or null as its version has it.
    expect(answer.answer.partialSuccess ?? undefined).toBeUndefined();
    const [execution] = await executionsOf(pipeline.id);
    expect(execution).toEqual({
      id: traceId,
      pipelineId: pipeline.id,
      configurationId: pipeline.activeConfigurationId,
      status: 'failed',
      durationMs: 900,
      startedAt: new Date(at).toISOString(),
      error: 'the model call failed',
      input: { question: 'what is our refund policy?' },
      source: 'otlp',
      slotResults: [
        { slotId: 'retrieve', status: 'succeeded', durationMs: 300 },
        {
          slotId: 'answer-model',
          status: 'failed',
          durationMs: 560,
          error: 'overloaded_error: Overloaded',
          inputTokens: 120,
          outputTokens: 40,
        },
      ],
    });
    const signals = await signalsOf(pipeline.id);
    expect(
      signals.map((signal) => [
        signal.kind,
        signal.severity,
        signal.slotId,
        signal.executionId,
        signal.value,
      ]),
    ).toEqual(
      expect.arrayContaining([
        ['relevance', 'warning', undefined, traceId, 0.2],
        ['error', 'critical', 'answer-model', traceId, undefined],
      ]),
    );
    expect(signals).toHaveLength(2);
  });

  it('reads OTLP/JSON (hex ids) gzipped, and answers in JSON', async () => {
    const pipeline = await newPipeline();
    const tracer = recordingTracer();
    const traceId = run(tracer, pipeline.id, pipeline.activeConfigurationId, Date.now() - 30_000);

    const answer = await post(pipeline.id, jsonBody(tracer.spans()), {
      contentType: 'application/json',
      gzip: true,
    });

    expect(answer).toMatchObject({ status: 200, type: 'application/json', answer: {} });
    const executions = await executionsOf(pipeline.id);
    expect(
      executions.map((execution) => [execution.id, execution.status, execution.slotResults?.length]),
    ).toEqual([[traceId, 'succeeded', 2]]);
  });

  it('assembles a trace sent in pieces in any order, and a retried batch changes nothing', async () => {
    const pipeline = await newPipeline();
    const tracer = recordingTracer();
    const traceId = run(tracer, pipeline.id, pipeline.activeConfigurationId, Date.now() - 20_000, true);
    const [retrieve, chat, root] = tracer.spans();
    if (!retrieve || !chat || !root) throw new Error('the run made three spans');

    // A child alone: no root yet, so no execution yet.
    expect((await post(pipeline.id, protobufBody([chat]))).status).toBe(200);
    expect(await executionsOf(pipeline.id)).toEqual([]);
    // The root: the execution, with the slot that came before it.
    await post(pipeline.id, protobufBody([root]));
    let [execution] = await executionsOf(pipeline.id);
    expect(execution?.slotResults?.map((slot) => slot.slotId)).toEqual(['answer-model']);
    // A slot span after its root updates the same execution.
    await post(pipeline.id, jsonBody([retrieve]), { contentType: 'application/json' });
    // The whole batch again, as an exporter retries it.
    await post(pipeline.id, protobufBody([retrieve, chat, root]));

    const executions = await executionsOf(pipeline.id);
    expect(executions).toHaveLength(1);
    [execution] = executions;
    expect(execution?.id).toBe(traceId);
    expect(execution?.slotResults?.map((slot) => slot.slotId)).toEqual(['retrieve', 'answer-model']);
    const signals = await signalsOf(pipeline.id);
    expect(signals.map((signal) => signal.kind).sort()).toEqual(['error', 'relevance']);
  });

  it('assembles a trace with the spans staged before staged spans were gzip (stored as text)', async () => {
    const pipeline = await newPipeline();
    const tracer = recordingTracer();
    const traceId = run(tracer, pipeline.id, pipeline.activeConfigurationId, Date.now() - 20_000);
    const [, chat, root] = tracer.spans();
    if (!chat || !root) throw new Error('the run made three spans');
    await post(pipeline.id, protobufBody([chat]));
    // The child's item as the ingest wrote it before: its spans' JSON as text.
    const staged = await db.send(
      new QueryCommand({
        TableName: names.Data,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :trace)',
        ExpressionAttributeValues: { ':pk': tracePartition(pipeline.id, traceId), ':trace': `${traceId}#` },
      }),
    );
    const spansItems = (staged.Items ?? []).filter((item) => item.spansGzip instanceof Uint8Array);
    expect(spansItems).toHaveLength(1);
    for (const { spansGzip, ...item } of spansItems) {
      const spans = gunzipSync(spansGzip as Uint8Array).toString('utf8');
      await db.send(new PutCommand({ TableName: names.Data, Item: { ...item, spans } }));
    }

    await post(pipeline.id, protobufBody([root]));

    const [execution] = await executionsOf(pipeline.id);
    expect(execution?.slotResults?.map((slot) => slot.slotId)).toEqual(['answer-model']);
  });

  it('uses the configuration the feature-flag event names, else the active one', async () => {
    const pipeline = await newPipeline();
    const tracer = recordingTracer();
    run(tracer, pipeline.id, 'noSuchConfiguration', Date.now() - 10_000);
    await post(pipeline.id, protobufBody(tracer.spans()));
    const [execution] = await executionsOf(pipeline.id);
    expect(execution?.configurationId).toBe(pipeline.activeConfigurationId);
  });
});
