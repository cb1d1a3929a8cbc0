import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  type AnthropicFake,
  startAnthropicFake,
  toolReply,
  unauthorized,
} from '../../support/anthropic-fake.ts';
import { ANTHROPIC_KEY_PREFIX } from '../../support/fake-secrets.ts';
import { importHandler } from '../../support/function-modules.ts';
import {
  apiEvent,
  createCaller,
  invoke,
  lambdaContext,
  type SqsLambda,
  setUpApiEnvironment,
  sqsEvent,
} from '../api/harness.ts';
import { type ClaudeTestBed, goodDraft, seedPendingRun, testBed } from './fixtures.ts';

const SECRET_ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:anthropic-api-key-AbCdEf';
const OLD_KEY = `${ANTHROPIC_KEY_PREFIX}rotated-away-0000000000`;
const NEW_KEY = `${ANTHROPIC_KEY_PREFIX}current-1111111111111111`;

const secrets = mockClient(SecretsManagerClient);
const sqs = mockClient(SQSClient);
let fake: AnthropicFake;
let bed: ClaudeTestBed;
let worker: SqsLambda;
let db: Awaited<ReturnType<typeof setUpApiEnvironment>>['db'];
let names: Awaited<ReturnType<typeof setUpApiEnvironment>>['names'];

beforeAll(async () => {
  fake = await startAnthropicFake();
  // The worker reads its configuration at import time, as a Lambda does at a cold start.
  ({ db, names } = await setUpApiEnvironment({
    ANTHROPIC_SECRET_ARN: SECRET_ARN,
    ANTHROPIC_BASE_URL: fake.url,
    ANTHROPIC_MODEL: 'claude-worker-test',
    ANTHROPIC_MAX_TOKENS: '1500',
    ANTHROPIC_TIME_BUDGET_MS: '5000',
    ANTHROPIC_REQUEST_TIMEOUT_MS: '2000',
  }));
  bed = testBed(db, names);
  worker = (await import('../../../lambdas/handlers/process-synthesis-jobs.ts')).handler as SqsLambda;
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => {
  fake.reset();
});

describe('the synthesis worker running claude-v1 with the key in Secrets Manager', () => {
  it('reads the key once, re-reads it after a 401, and keeps it for later jobs', async () => {
    secrets
      .on(GetSecretValueCommand, { SecretId: SECRET_ARN })
      .resolvesOnce({ SecretString: OLD_KEY })
      .resolves({ SecretString: `${NEW_KEY}\n` });
    const first = await seedPendingRun(bed);
    const second = await seedPendingRun(bed);
    fake.script(
      unauthorized(),
      toolReply(goodDraft(), { inputTokens: 900, outputTokens: 90 }),
      toolReply(goodDraft()),
    );

    const firstResult = await worker(
      sqsEvent([JSON.stringify({ runId: first.run.id, jobId: first.run.jobId })]),
      lambdaContext(),
    );
    const secondResult = await worker(
      sqsEvent([JSON.stringify({ runId: second.run.id, jobId: second.run.jobId })]),
      lambdaContext(),
    );

    expect(firstResult.batchItemFailures).toEqual([]);
    expect(secondResult.batchItemFailures).toEqual([]);
    expect(secrets.commandCalls(GetSecretValueCommand)).toHaveLength(2);
    expect(fake.requests.map((request) => request.headers.authorization)).toEqual([
      `Bearer ${OLD_KEY}`,
      `Bearer ${NEW_KEY}`,
      `Bearer ${NEW_KEY}`,
    ]);
    expect(fake.requests[0]?.body).toMatchObject({ model: 'claude-worker-test', max_tokens: 1500 });
    expect(await bed.runs.get(first.run.id)).toMatchObject({
      status: 'generated',
      synthesisHandler: 'claude-v1',
      usage: {
        model: 'claude-worker-test',
        inputTokens: 900,
        cacheReadInputTokens: 0,
        cacheWriteInputTokens: 0,
        outputTokens: 90,
        attempts: 2,
      },
    });
    expect((await bed.runs.get(second.run.id))?.status).toBe('generated');
  });

  it('sends no second request to the model when SQS redelivers the job of a finished run', async () => {
    secrets.on(GetSecretValueCommand).resolves({ SecretString: NEW_KEY });
    const { run } = await seedPendingRun(bed);
    const job = JSON.stringify({ runId: run.id, jobId: run.jobId });
    fake.script(toolReply(goodDraft()), toolReply(goodDraft()));

    await worker(sqsEvent([job]), lambdaContext());
    const generated = await bed.runs.get(run.id);
    const redelivered = await worker(sqsEvent([job], 2), lambdaContext());

    expect(redelivered.batchItemFailures).toEqual([]);
    expect(fake.requests).toHaveLength(1);
    expect(generated?.status).toBe('generated');
    expect(await bed.runs.get(run.id)).toEqual(generated);
  });

  it('fails the run when the secret still holds the placeholder the stack stored', async () => {
    secrets.reset();
    secrets
      .on(GetSecretValueCommand)
      .resolves({ SecretString: 'REPLACE_ME: store the Anthropic API key in this secret' });
    // This container has a key cached; a cold start (fresh modules) reads the secret again.
    vi.resetModules();
    const freshWorker = (await import('../../../lambdas/handlers/process-synthesis-jobs.ts'))
      .handler as SqsLambda;
    const { run } = await seedPendingRun(bed);

    await freshWorker(sqsEvent([JSON.stringify({ runId: run.id, jobId: run.jobId })]), lambdaContext());

    expect(fake.requests).toHaveLength(0);
    expect(await bed.runs.get(run.id)).toMatchObject({
      status: 'failed',
      errorMessage: expect.stringContaining('still holds its placeholder'),
    });
  });
});

describe('POST /pipelines/{pipelineId}/synthesize with a key configured', () => {
  it('starts claude-v1 runs by default and still accepts heuristic-v1 by name', async () => {
    sqs.on(SendMessageCommand).resolves({ MessageId: 'm-1' });
    const caller = await createCaller(db, names);
    const http = (entry: string) => importHandler<Parameters<typeof invoke>[0]>(entry);
    const created = await invoke(
      await http('create-pipeline'),
      apiEvent({
        method: 'POST',
        resource: '/pipelines',
        body: { name: 'bot', slots: [{ id: 's1', name: 'Model', kind: 'model', settings: {} }] },
        principal: caller.principal,
      }),
    );
    const synthesize = await http('synthesize-pipeline');
    const start = (body: object) =>
      invoke(
        synthesize,
        apiEvent({
          method: 'POST',
          resource: '/pipelines/{pipelineId}/synthesize',
          pathParameters: { pipelineId: created.body.id },
          body,
          principal: caller.principal,
        }),
      );

    const byDefault = await start({});
    const byName = await start({ synthesisHandler: 'heuristic-v1' });

    expect(byDefault).toMatchObject({ status: 202, body: { synthesisHandler: 'claude-v1', usage: null } });
    expect(byName).toMatchObject({ status: 202, body: { synthesisHandler: 'heuristic-v1' } });
  });
});
