import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEMO_SLOTS } from '../../../local/seed.ts';
import {
  type AnthropicFake,
  startAnthropicFake,
  toolReply,
  unauthorized,
} from '../../support/anthropic-fake.ts';
import { capturedOutput } from '../../support/captured-output.ts';
import { ANTHROPIC_KEY_PREFIX } from '../../support/fake-secrets.ts';
import {
  apiEvent,
  type Caller,
  createCaller,
  invoke,
  lambdaContext,
  loadHandlers,
  type SqsLambda,
  setUpApiEnvironment,
  sqsEvent,
} from '../api/harness.ts';
import { type ClaudeTestBed, goodDraft, seedPendingRun, testBed } from '../claude/fixtures.ts';

/**
 * The figures operations watch, as the real handlers emit them (EMF lines on stdout): runs started
 * (not replays), generated and failed by handler and error class, generation duration, model
 * tokens and cost — and the run's usage.costUsd from the price table, overridden by MODEL_PRICES.
 */
type HttpLambda = (event: unknown, context: unknown) => Promise<APIGatewayProxyResult>;

const sqs = mockClient(SQSClient);
const MODEL = 'claude-sonnet-4-6';
let fake: AnthropicFake;
let bed: ClaudeTestBed;
let worker: SqsLambda;
let http: Record<string, HttpLambda>;
let caller: Caller;
const output = capturedOutput();

beforeAll(async () => {
  fake = await startAnthropicFake();
  const { db, names } = await setUpApiEnvironment({
    ANTHROPIC_API_KEY: `${ANTHROPIC_KEY_PREFIX}metrics-test-00000000000`,
    ANTHROPIC_BASE_URL: fake.url,
    ANTHROPIC_MODEL: MODEL,
    ANTHROPIC_MAX_RETRIES: '0',
    POWERTOOLS_METRICS_DISABLED: 'false',
    // A deployment's own prices: $2 per million input tokens, $10 per million output tokens.
    MODEL_PRICES: JSON.stringify({ [MODEL]: { inputPerMillionUsd: 2, outputPerMillionUsd: 10 } }),
  });
  bed = testBed(db, names);
  caller = await createCaller(db, names);
  http = (await loadHandlers(['create-pipeline', 'synthesize-pipeline'])) as Record<string, HttpLambda>;
  worker = (await import('../../../lambdas/handlers/process-synthesis-jobs.ts')).handler as SqsLambda;
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => {
  fake.reset();
  sqs.reset();
  sqs.on(SendMessageCommand).resolves({ MessageId: 'm-1' });
  output.start();
});
afterEach(() => output.stop());

interface MetricSet {
  dimensions: Record<string, unknown>;
  values: Record<string, number>;
}

/** Every EMF metric set written, with its dimension values and metric values. */
function metricSets(): MetricSet[] {
  return output
    .jsonLines()
    .filter((line) => '_aws' in line)
    .map((line) => {
      const set = line as Record<string, unknown> & {
        _aws: { CloudWatchMetrics: Array<{ Dimensions: string[][]; Metrics: Array<{ Name: string }> }> };
      };
      const [declaration] = set._aws.CloudWatchMetrics;
      return {
        dimensions: Object.fromEntries((declaration?.Dimensions[0] ?? []).map((name) => [name, set[name]])),
        values: Object.fromEntries((declaration?.Metrics ?? []).map(({ Name }) => [Name, Number(set[Name])])),
      };
    });
}
const setsWith = (name: string) => metricSets().filter((set) => name in set.values);

describe('operations metrics', () => {
  it('counts a started run once by handler, and not again for an Idempotency-Key replay', async () => {
    const created = await invoke(
      http['create-pipeline'] as HttpLambda,
      apiEvent({
        method: 'POST',
        resource: '/pipelines',
        body: { name: 'ops', slots: DEMO_SLOTS },
        principal: caller.principal,
      }),
    );
    const start = () =>
      invoke(
        http['synthesize-pipeline'] as HttpLambda,
        apiEvent({
          method: 'POST',
          resource: '/pipelines/{pipelineId}/synthesize',
          pathParameters: { pipelineId: created.body.id },
          body: { synthesisHandler: 'heuristic-v1' },
          headers: { 'idempotency-key': 'ops-metrics-1' },
          principal: caller.principal,
        }),
      );
    expect((await start()).status).toBe(202);
    expect((await start()).status).toBe(202);

    const started = setsWith('RunsStarted');
    expect(started).toHaveLength(1);
    expect(started[0]).toMatchObject({
      dimensions: { synthesisHandler: 'heuristic-v1' },
      values: { RunsStarted: 1 },
    });
  });

  it('records usage.costUsd from the overridden price table, and duration, tokens and cost as metrics', async () => {
    const { run } = await seedPendingRun(bed);
    fake.script(toolReply(goodDraft(), { inputTokens: 12_000, outputTokens: 1_500 }));

    await worker(sqsEvent([JSON.stringify({ runId: run.id, jobId: run.jobId })]), lambdaContext());

    const stored = await bed.runs.get(run.id);
    expect(stored?.status).toBe('generated');
    // 12,000 × $2/M + 1,500 × $10/M = $0.024 + $0.015
    expect(stored?.usage).toMatchObject({
      model: MODEL,
      inputTokens: 12_000,
      outputTokens: 1_500,
      costUsd: 0.039,
    });
    expect(setsWith('RunsGenerated')[0]?.dimensions).toMatchObject({ synthesisHandler: 'claude-v1' });
    const [duration] = setsWith('GenerationDuration');
    expect(duration?.dimensions).toMatchObject({ synthesisHandler: 'claude-v1' });
    expect(duration?.values.GenerationDuration).toBeGreaterThanOrEqual(0);
    const byModel = (name: string) =>
      setsWith(name).map((set) => ({ model: set.dimensions.model, value: set.values[name] }));
    expect(byModel('ModelInputTokens')).toEqual([{ model: MODEL, value: 12_000 }]);
    expect(byModel('ModelOutputTokens')).toEqual([{ model: MODEL, value: 1_500 }]);
    expect(byModel('ModelCostUsd')).toEqual([{ model: MODEL, value: 0.039 }]);
  });

  it('counts a failed run by handler and error class, with what its model calls cost', async () => {
    const { run } = await seedPendingRun(bed);
    fake.script(unauthorized());

    await worker(sqsEvent([JSON.stringify({ runId: run.id, jobId: run.jobId })]), lambdaContext());

    expect((await bed.runs.get(run.id))?.status).toBe('failed');
    expect(setsWith('RunsFailed')).toEqual([
      {
        dimensions: expect.objectContaining({
          synthesisHandler: 'claude-v1',
          errorClass: 'SynthesisFailure',
        }),
        values: { RunsFailed: 1 },
      },
    ]);
    expect(setsWith('GenerationDuration')).toEqual([]);
  });
});
