/** What a run costs with the prompt cache, on either provider, and the estimate before it as a bound. */
import { describe, expect, it } from 'vitest';
import {
  anthropicModelName,
  costUsd,
  DEFAULT_MODEL_PRICES,
  priceOf,
} from '../../../lambdas/core/model-pricing.ts';
import { estimatedPromptCostUsd } from '../../../lambdas/synthesis/claude/estimate.ts';

const SONNET = { inputPerMillionUsd: 3, outputPerMillionUsd: 15 };

describe('costUsd with the prompt cache', () => {
  it('prices cache reads at 0.1 × and writes at 1.25 × the input price, the rest of the input at 1 ×', () => {
    const usage = {
      model: 'claude-sonnet-4-6',
      inputTokens: 1_000_000 + 2_000_000 + 4_000_000,
      cacheReadInputTokens: 2_000_000,
      cacheWriteInputTokens: 4_000_000,
      outputTokens: 1_000_000,
      attempts: 1,
    };

    // 1 M plain × 3 + 2 M read × 0.3 + 4 M written × 3.75 + 1 M out × 15.
    expect(costUsd(usage, DEFAULT_MODEL_PRICES)).toBe(3 + 0.6 + 15 + 15);
  });

  it('prices a run recorded before caching (no cache fields) as plain input', () => {
    const usage = { model: 'claude-sonnet-4-6', inputTokens: 1_000_000, outputTokens: 0, attempts: 1 };

    expect(costUsd(usage, DEFAULT_MODEL_PRICES)).toBe(3);
  });
});

describe('the price table on Bedrock', () => {
  it.each([
    ['us.anthropic.claude-sonnet-4-6-v1:0', 'claude-sonnet-4-6-v1:0'],
    ['global.anthropic.claude-haiku-4-5-20251001-v1:0', 'claude-haiku-4-5-20251001-v1:0'],
    ['anthropic.claude-opus-4-5-v1:0', 'claude-opus-4-5-v1:0'],
    [
      'arn:aws:bedrock:us-east-1:111122223333:inference-profile/us.anthropic.claude-sonnet-4-6-v1:0',
      'claude-sonnet-4-6-v1:0',
    ],
  ])('prices %s as the Anthropic model inside it', (bedrockId, name) => {
    expect(anthropicModelName(bedrockId)).toBe(name);
    expect(priceOf(bedrockId, DEFAULT_MODEL_PRICES)).toEqual(priceOf(name, DEFAULT_MODEL_PRICES));
    expect(priceOf(bedrockId, DEFAULT_MODEL_PRICES)).toBeDefined();
  });

  it('lets a deployment price a Bedrock profile of its own, over the model inside it', () => {
    const prices = {
      ...DEFAULT_MODEL_PRICES,
      'us.anthropic.claude-sonnet-4-6': { inputPerMillionUsd: 3.3, outputPerMillionUsd: 16.5 },
    };

    expect(priceOf('us.anthropic.claude-sonnet-4-6-v1:0', prices)?.inputPerMillionUsd).toBe(3.3);
    expect(priceOf('eu.anthropic.claude-sonnet-4-6-v1:0', prices)?.inputPerMillionUsd).toBe(3);
  });
});

describe('the estimate before a run', () => {
  it('stays an upper bound of the prompt’s price however the cache splits it', () => {
    const tokens = 12_345;
    const estimate = estimatedPromptCostUsd(tokens, SONNET);
    for (const written of [0, 1_000, 6_000, tokens]) {
      for (const read of [0, 2_000, tokens - written]) {
        if (written + read > tokens) continue;
        const usage = {
          model: 'claude-sonnet-4-6',
          inputTokens: tokens,
          cacheReadInputTokens: read,
          cacheWriteInputTokens: written,
          outputTokens: 0,
          attempts: 1,
        };
        expect(
          costUsd(usage, { 'claude-sonnet-4': SONNET }),
          `${written} written, ${read} read`,
        ).toBeLessThanOrEqual(estimate);
      }
    }
    // All written is the worst case, and the estimate is that (rounded up).
    expect(estimate).toBeCloseTo((tokens * 1.25 * 3) / 1_000_000, 6);
  });
});
