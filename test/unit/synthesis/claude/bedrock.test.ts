import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { SynthesisFailure, TransientSynthesisError } from '../../../../lambdas/core/errors.ts';
import { costUsd, DEFAULT_MODEL_PRICES } from '../../../../lambdas/core/model-pricing.ts';
import type { SynthesisProposal } from '../../../../lambdas/core/ports/synthesis.ts';
import { createClaudeV1 } from '../../../../lambdas/synthesis/claude/engine.ts';
import { BEDROCK_ANTHROPIC_VERSION, createBedrockClient } from '../../../../lambdas/wiring/bedrock-client.ts';
import { type AnthropicFake, hang, startAnthropicFake, toolReply } from '../../../support/anthropic-fake.ts';
import {
  accessDenied,
  type BedrockFake,
  bedrockError,
  FAKE_BEDROCK_MODEL,
  modelNotReady,
  serviceUnavailable,
  startBedrockFake,
  throttled,
} from '../../../support/bedrock-fake.ts';
import { context, countingKeys, goodDraft, settle } from './harness.ts';

/**
 * claude-v1 on Amazon Bedrock: the real Bedrock SDK (wiring/bedrock-client.ts) against the local
 * InvokeModel fake, which recomputes each request's SigV4 signature and refuses a body without the
 * pinned anthropic_version. The same run as on the Anthropic API, and each refusal of Bedrock's the
 * right kind, with a message naming what to fix.
 */

let bedrock: BedrockFake;
let anthropic: AnthropicFake;

beforeAll(async () => {
  [bedrock, anthropic] = await Promise.all([startBedrockFake({ region: 'eu-west-1' }), startAnthropicFake()]);
});
afterAll(async () => {
  await Promise.all([bedrock.close(), anthropic.close()]);
});
beforeEach(() => {
  bedrock.reset();
  anthropic.reset();
  // Lambda gives the role's credentials in the environment; the fake knows the secret of "local".
  vi.stubEnv('AWS_ACCESS_KEY_ID', 'local');
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'local');
  vi.stubEnv('AWS_SESSION_TOKEN', '');
  return () => vi.unstubAllEnvs();
});

const LIMITS = {
  maxTokens: 2_048,
  timeBudgetMs: 5_000,
  requestTimeoutMs: 2_000,
  maxRetries: 2,
  backoff: { initialMs: 10, maxMs: 50 },
};

function onBedrock(
  overrides: { model?: string; region?: string; requestTimeoutMs?: number; maxRetries?: number } = {},
) {
  const settings = {
    model: overrides.model ?? FAKE_BEDROCK_MODEL,
    region: overrides.region ?? 'eu-west-1',
    baseURL: bedrock.url,
  };
  const requestTimeoutMs = overrides.requestTimeoutMs ?? LIMITS.requestTimeoutMs;
  return createClaudeV1({
    ...LIMITS,
    requestTimeoutMs,
    maxRetries: overrides.maxRetries ?? LIMITS.maxRetries,
    provider: 'bedrock',
    region: settings.region,
    client: async () => createBedrockClient(settings, requestTimeoutMs),
    model: settings.model,
  });
}

const onAnthropic = () =>
  createClaudeV1({ ...LIMITS, keys: countingKeys(), baseURL: anthropic.url, model: FAKE_BEDROCK_MODEL });

/** The proposal without what differs by provider only by design (nothing, today, but the usage). */
const comparable = (proposal: SynthesisProposal | undefined) => ({ ...proposal, usage: undefined });

describe('claude-v1 on Bedrock, as on the Anthropic API', () => {
  it('makes one signed InvokeModel call with the pinned anthropic_version and returns the same proposal', async () => {
    bedrock.script(toolReply(goodDraft()));
    anthropic.script(toolReply(goodDraft()));

    const onBoth = await Promise.all([
      settle(onBedrock().generate(context())),
      settle(onAnthropic().generate(context())),
    ]);

    const [viaBedrock, viaAnthropic] = onBoth;
    expect(bedrock.refused).toEqual([]);
    expect(viaBedrock.error).toBeUndefined();
    expect(bedrock.requests).toHaveLength(1);
    const [request] = bedrock.requests;
    expect(decodeURIComponent(request?.path ?? '')).toBe(`/model/${FAKE_BEDROCK_MODEL}/invoke`);
    expect(request?.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=local\/\d{8}\/eu-west-1\/bedrock\/aws4_request, SignedHeaders=[a-z0-9;-]*host[a-z0-9;-]*, Signature=[0-9a-f]{64}$/,
    );
    expect(request?.headers['x-api-key']).toBeUndefined();
    expect(request?.body.anthropic_version).toBe(BEDROCK_ANTHROPIC_VERSION);
    expect(request?.body.model).toBeUndefined();
    // The same prompt, tool and cache breakpoints as the Messages request, less the model (in the path).
    const { model: _model, ...messagesBody } = anthropic.requests[0]?.body ?? {};
    const { anthropic_version: _version, ...invokeBody } = request?.body ?? {};
    expect(invokeBody).toEqual(messagesBody);
    expect(comparable(viaBedrock.value)).toEqual(comparable(viaAnthropic.value));
    expect(viaBedrock.value?.usage).toMatchObject({ model: FAKE_BEDROCK_MODEL, attempts: 1 });
  });

  it('asks for one repair after a reply that breaks the schema, as on the Anthropic API', async () => {
    bedrock.script(toolReply({ diagnosis: 'not an object' }), toolReply(goodDraft()));

    const { value, error } = await settle(onBedrock().generate(context()));

    expect(error).toBeUndefined();
    expect(bedrock.requests).toHaveLength(2);
    expect(value?.usage?.attempts).toBe(2);
    expect(value?.changes.map((change) => change.slotId)).toEqual(['retrieve']);
  });
});

describe('claude-v1 fails a run Bedrock refuses, after exactly one call, saying what to fix', () => {
  it('AccessDeniedException: names model access, the IAM action and the region', async () => {
    bedrock.script(accessDenied(), toolReply(goodDraft()));

    const { error } = await settle(onBedrock().generate(context()));

    expect(error).toBeInstanceOf(SynthesisFailure);
    expect(bedrock.requests).toHaveLength(1);
    const message = (error as Error).message;
    expect(message).toContain(`Amazon Bedrock denied the call to ${FAKE_BEDROCK_MODEL} in eu-west-1`);
    expect(message).toContain('Model access');
    expect(message).toContain('bedrock:InvokeModel');
  });

  it('an unknown model id (ValidationException from Bedrock itself): names the setting to change', async () => {
    const { error } = await settle(
      onBedrock({ model: 'us.anthropic.claude-nonexistent-v9:0' }).generate(context()),
    );

    expect(error).toBeInstanceOf(SynthesisFailure);
    expect(bedrock.refused).toEqual([
      { status: 400, type: 'ValidationException', message: 'The provided model identifier is invalid.' },
    ]);
    expect((error as Error).message).toContain(
      'Amazon Bedrock has no model us.anthropic.claude-nonexistent-v9:0 that this account can invoke in eu-west-1',
    );
    expect((error as Error).message).toContain('bedrockModelId (BEDROCK_MODEL_ID locally)');
  });

  it('ResourceNotFoundException: the same advice', async () => {
    bedrock.script(bedrockError(404, 'ResourceNotFoundException', 'Model not found.'));

    const { error } = await settle(onBedrock().generate(context()));

    expect(error).toBeInstanceOf(SynthesisFailure);
    expect((error as Error).message).toContain('bedrockModelId');
  });

  it('a bad request: fails as invalid with Bedrock’s words', async () => {
    bedrock.script(bedrockError(400, 'ValidationException', 'max_tokens: must be at most 64000'));

    const { error } = await settle(onBedrock().generate(context()));

    expect(error).toBeInstanceOf(SynthesisFailure);
    expect(bedrock.requests).toHaveLength(1);
    expect((error as Error).message).toBe(
      `Amazon Bedrock refused the request to ${FAKE_BEDROCK_MODEL} in eu-west-1 as invalid (HTTP 400, ` +
        'ValidationException: max_tokens: must be at most 64000). Then start a new run.',
    );
  });

  it('credentials Bedrock does not know: names the role and the region', async () => {
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'someone-else');

    const { error } = await settle(onBedrock().generate(context()));

    expect(error).toBeInstanceOf(SynthesisFailure);
    expect(bedrock.refused.map((refusal) => refusal.type)).toEqual(['UnrecognizedClientException']);
    expect((error as Error).message).toContain("refused the worker's AWS credentials");
  });
});

describe('claude-v1 retries what passes on Bedrock, within the run’s budget', () => {
  it.each([
    ['ThrottlingException', throttled],
    ['ModelNotReadyException', modelNotReady],
    ['ServiceUnavailableException', serviceUnavailable],
  ])('%s, then a reply: two calls and the proposal', async (_name, fault) => {
    bedrock.script(fault(), toolReply(goodDraft()));

    const { value, error } = await settle(onBedrock().generate(context()));

    expect(error).toBeUndefined();
    expect(bedrock.requests).toHaveLength(2);
    expect(value?.usage?.attempts).toBe(2);
  });

  it('hands a throttled job to the queue when the retries are spent, naming Bedrock’s error', async () => {
    bedrock.script(throttled(), throttled());

    const { error } = await settle(onBedrock({ maxRetries: 1 }).generate(context()));

    expect(error).toBeInstanceOf(TransientSynthesisError);
    expect((error as Error).message).toBe(
      'The model API was throttled (ThrottlingException, HTTP 429) on 2 attempts of the request.',
    );
  });

  it('times a slow model out and hands the job to the queue', async () => {
    bedrock.script(hang(), hang());

    const { error } = await settle(onBedrock({ requestTimeoutMs: 200, maxRetries: 1 }).generate(context()));

    expect(error).toBeInstanceOf(TransientSynthesisError);
    expect((error as Error).message).toBe('The model API timed out on 2 attempts of the request.');
  });
});

describe('prompt caching on Bedrock', () => {
  it('reads the prompt from the cache on a second run, and the second run costs less than half', async () => {
    const cached = await startBedrockFake({ region: 'eu-west-1', promptCache: true });
    try {
      const settings = { model: FAKE_BEDROCK_MODEL, region: 'eu-west-1', baseURL: cached.url };
      const claude = createClaudeV1({
        ...LIMITS,
        provider: 'bedrock',
        region: 'eu-west-1',
        client: async () => createBedrockClient(settings, LIMITS.requestTimeoutMs),
        model: FAKE_BEDROCK_MODEL,
      });
      cached.script(toolReply(goodDraft()), toolReply(goodDraft()));

      const first = await claude.generate(context());
      const second = await claude.generate(context());

      expect(first.usage?.cacheWriteInputTokens).toBeGreaterThan(1_000);
      expect(first.usage?.cacheReadInputTokens).toBe(0);
      expect(second.usage?.cacheReadInputTokens).toBe(first.usage?.cacheWriteInputTokens);
      expect(second.usage?.cacheWriteInputTokens).toBe(0);
      const firstCost = first.usage ? costUsd(first.usage, DEFAULT_MODEL_PRICES) : null;
      const secondCost = second.usage ? costUsd(second.usage, DEFAULT_MODEL_PRICES) : null;
      expect(secondCost).toBeLessThan((firstCost ?? 0) * 0.5);
    } finally {
      await cached.close();
    }
  });
});
