/**
 * Which provider claude-v1 is composed with, from the environment as the worker reads it: the
 * Anthropic API by default, Bedrock with MODEL_PROVIDER=bedrock (its model id, region and base
 * URL), anything else refused at the cold start; and the model a run's estimate prices.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { bedrockSettingsFromEnv, modelProviderFromEnv } from '../../../../lambdas/wiring/bedrock.ts';
import { createClaudeV1FromEnv } from '../../../../lambdas/wiring/claude-v1.ts';
import { type AnthropicFake, startAnthropicFake, toolReply } from '../../../support/anthropic-fake.ts';
import { type BedrockFake, FAKE_BEDROCK_MODEL, startBedrockFake } from '../../../support/bedrock-fake.ts';
import { context, goodDraft } from './harness.ts';

let anthropic: AnthropicFake;
let bedrock: BedrockFake;

beforeAll(async () => {
  [anthropic, bedrock] = await Promise.all([startAnthropicFake(), startBedrockFake()]);
});
afterAll(async () => {
  await Promise.all([anthropic.close(), bedrock.close()]);
});
beforeEach(() => {
  anthropic.reset();
  bedrock.reset();
  for (const name of ['MODEL_PROVIDER', 'BEDROCK_MODEL_ID', 'BEDROCK_BASE_URL', 'ANTHROPIC_SECRET_ARN'])
    vi.stubEnv(name, '');
  vi.stubEnv('AWS_REGION', 'us-east-1');
  vi.stubEnv('AWS_ACCESS_KEY_ID', 'local');
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'local');
  vi.stubEnv('ANTHROPIC_API_KEY', 'test-key');
  vi.stubEnv('ANTHROPIC_BASE_URL', anthropic.url);
  vi.stubEnv('ANTHROPIC_MAX_RETRIES', '0');
  return () => vi.unstubAllEnvs();
});

describe('the provider of claude-v1', () => {
  it('is the Anthropic API when MODEL_PROVIDER is unset', async () => {
    anthropic.script(toolReply(goodDraft()));

    const proposal = await createClaudeV1FromEnv(() => undefined).generate(context());

    expect(modelProviderFromEnv()).toBe('anthropic');
    expect(anthropic.requests).toHaveLength(1);
    expect(bedrock.requests).toHaveLength(0);
    expect(proposal.usage?.model).toBe('claude-sonnet-4-6');
  });

  it('is Bedrock with MODEL_PROVIDER=bedrock: the model id, the region and the base URL from the environment', async () => {
    vi.stubEnv('MODEL_PROVIDER', 'bedrock');
    vi.stubEnv('BEDROCK_BASE_URL', bedrock.url);
    vi.stubEnv('BEDROCK_MODEL_ID', FAKE_BEDROCK_MODEL);
    bedrock.script(toolReply(goodDraft()));

    const proposal = await createClaudeV1FromEnv(() => undefined).generate(context());

    expect(bedrock.requests.map((request) => request.modelId)).toEqual([FAKE_BEDROCK_MODEL]);
    expect(anthropic.requests).toHaveLength(0);
    expect(proposal.usage?.model).toBe(FAKE_BEDROCK_MODEL);
  });

  it('defaults the Bedrock model id, and refuses a provider it does not know', () => {
    vi.stubEnv('MODEL_PROVIDER', 'bedrock');
    expect(bedrockSettingsFromEnv()).toEqual({
      model: 'us.anthropic.claude-sonnet-4-6-v1:0',
      region: 'us-east-1',
      baseURL: undefined,
    });
    vi.stubEnv('MODEL_PROVIDER', 'openai');
    expect(() => modelProviderFromEnv()).toThrow('MODEL_PROVIDER');
  });
});
