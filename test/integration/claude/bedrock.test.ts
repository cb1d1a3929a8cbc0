/**
 * claude-v1 on Amazon Bedrock through the generation use case and DynamoDB Local: the run stored
 * as generated with its usage (cache writes, then reads on a second run) priced by the price table,
 * and a denied model stored as a failed run with the message saying what to fix.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createClaudeV1 } from '../../../lambdas/synthesis/claude/engine.ts';
import { createBedrockClient } from '../../../lambdas/wiring/bedrock-client.ts';
import { toolReply } from '../../support/anthropic-fake.ts';
import {
  accessDenied,
  type BedrockFake,
  FAKE_BEDROCK_MODEL,
  startBedrockFake,
} from '../../support/bedrock-fake.ts';
import { type ClaudeTestBed, generatorWith, goodDraft, seedPendingRun, setUpStore } from './fixtures.ts';

let fake: BedrockFake;
let bed: ClaudeTestBed;

beforeAll(async () => {
  [fake, bed] = await Promise.all([startBedrockFake({ promptCache: true }), setUpStore()]);
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => {
  fake.reset();
  vi.stubEnv('AWS_ACCESS_KEY_ID', 'local');
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'local');
  return () => vi.unstubAllEnvs();
});

const settings = () => ({ model: FAKE_BEDROCK_MODEL, region: 'us-east-1', baseURL: fake.url });
const engine = () =>
  createClaudeV1({
    provider: 'bedrock',
    region: 'us-east-1',
    client: async () => createBedrockClient(settings(), 2_000),
    model: FAKE_BEDROCK_MODEL,
    maxTokens: 2_048,
    timeBudgetMs: 5_000,
    requestTimeoutMs: 2_000,
    maxRetries: 0,
  });

async function generate() {
  const seeded = await seedPendingRun(bed);
  const result = await generatorWith(bed, engine())({ runId: seeded.run.id, jobId: seeded.run.jobId });
  const run = await bed.runs.get(seeded.run.id);
  if (run === null) throw new Error('the run disappeared');
  return { outcome: result.outcome, run };
}

describe('claude-v1 on Bedrock, stored', () => {
  it('stores the run generated with its cache writes priced, and another pipeline’s run reading the shared prefix for less', async () => {
    fake.script(toolReply(goodDraft(), { outputTokens: 300 }), toolReply(goodDraft(), { outputTokens: 300 }));

    const first = await generate();
    const second = await generate();

    expect(first.outcome).toBe('generated');
    expect(first.run.usage).toMatchObject({
      model: FAKE_BEDROCK_MODEL,
      cacheReadInputTokens: 0,
      attempts: 1,
    });
    expect(first.run.usage?.cacheWriteInputTokens).toBeGreaterThan(1_000);
    // The second pipeline's data differs: it reads the tool and the instructions, writes its own data.
    expect(second.run.usage?.cacheReadInputTokens).toBeGreaterThan(1_000);
    expect(second.run.usage?.cacheWriteInputTokens).toBeLessThan(first.run.usage?.cacheWriteInputTokens ?? 0);
    // Priced as the Claude Sonnet model inside the profile id, each run at its cache rates.
    expect(first.run.usage?.costUsd).toBeGreaterThan(0);
    expect(second.run.usage?.costUsd).toBeLessThan(first.run.usage?.costUsd ?? 0);
  });

  it('stores a denied model as a failed run after one call, naming model access and the IAM action', async () => {
    fake.script(accessDenied(), toolReply(goodDraft()));

    const { outcome, run } = await generate();

    expect(outcome).toBe('failed');
    expect(fake.requests).toHaveLength(1);
    expect(run.status).toBe('failed');
    expect(run.errorMessage).toContain('Model access');
    expect(run.errorMessage).toContain('bedrock:InvokeModel');
  });
});
