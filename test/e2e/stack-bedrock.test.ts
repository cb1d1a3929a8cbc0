import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../local/stack.ts';
import {
  accessDenied,
  BEDROCK_VERSION,
  type BedrockFake,
  FAKE_BEDROCK_MODEL,
  throttled,
} from '../support/bedrock-fake.ts';
import { type StackWithBedrockFake, startStackWithModelFake } from '../support/stack-with-model-fake.ts';
import { waitFor } from '../support/wait.ts';

/**
 * claude-v1 on Amazon Bedrock through the real local stack (MODEL_PROVIDER=bedrock, the worker in
 * its own environment with the local stack's credentials, the Bedrock SDK loaded as the worker's
 * part): a run is generated from one signed InvokeModel call, a denied model fails the run at
 * once saying what to fix, and a throttled call goes back to the queue and then generates.
 */
describe('the local stack with MODEL_PROVIDER=bedrock', () => {
  let stack: LocalStack;
  let fake: BedrockFake;
  let running: StackWithBedrockFake;
  // biome-ignore lint/suspicious/noExplicitAny: API bodies are asserted field by field
  let call: (method: string, route: string, body?: unknown) => Promise<{ status: number; body: any }>;

  beforeAll(async () => {
    running = await startStackWithModelFake({ name: 'stack-bedrock', limits: {}, provider: 'bedrock' });
    ({ stack, fake } = running);
    const token = stack.teams[0]?.apiToken as string;
    call = async (method, route, body) => {
      const response = await fetch(`${stack.apiUrl}${route}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: response.status, body: await response.json() };
    };
  });
  afterAll(async () => {
    await running?.stop();
  });

  const pipelineId = () => stack.teams[0]?.pipelineIds[0] as string;
  async function runUntilSettled() {
    const started = await call('POST', `/pipelines/${pipelineId()}/synthesize`, {
      synthesisHandler: 'claude-v1',
    });
    expect(started.status).toBe(202);
    // biome-ignore lint/suspicious/noExplicitAny: API bodies are asserted field by field
    let run: any;
    await waitFor(
      async () => {
        run = (await call('GET', `/synthesis-runs/${started.body.id}`)).body;
        return run.status === 'generated' || run.status === 'failed';
      },
      `run ${started.body.id} to settle`,
      30_000,
      100,
    );
    return { started, run };
  }

  it('generates a run from one signed InvokeModel call, priced with its cache writes', async () => {
    fake.reset();

    const { started, run } = await runUntilSettled();

    expect(run.status).toBe('generated');
    expect(fake.refused).toEqual([]);
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]?.modelId).toBe(FAKE_BEDROCK_MODEL);
    expect(fake.requests[0]?.body.anthropic_version).toBe(BEDROCK_VERSION);
    expect(String(fake.requests[0]?.headers.authorization)).toMatch(
      /^AWS4-HMAC-SHA256 Credential=local\/\d{8}\/us-east-1\/bedrock\//,
    );
    expect(run.usage).toMatchObject({ model: FAKE_BEDROCK_MODEL, attempts: 1, cacheReadInputTokens: 0 });
    expect(run.costUsd).toBeGreaterThan(0);
    // The estimate before the run priced the Bedrock model, as an upper bound of the prompt.
    expect(started.body.estimatedCostUsd).toBeGreaterThan(0);
  });

  it('fails the run after one call when Bedrock denies the model, saying what to fix', async () => {
    fake.reset();
    fake.script(accessDenied());

    const { run } = await runUntilSettled();

    expect(run.status).toBe('failed');
    expect(fake.requests).toHaveLength(1);
    expect(run.errorMessage).toContain('Amazon Bedrock denied the call');
    expect(run.errorMessage).toContain('bedrock:InvokeModel');
  });

  it('hands a throttled call back to the queue, then generates', async () => {
    fake.reset();
    fake.script(throttled());

    const { run } = await runUntilSettled();

    expect(run.status).toBe('generated');
    expect(fake.requests).toHaveLength(2);
  });
});
