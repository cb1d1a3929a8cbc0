/** Which price a model pays: the longest listed prefix of its id wins, whatever the table's order. */
import { describe, expect, it } from 'vitest';
import { costUsd, DEFAULT_MODEL_PRICES, priceOf, withCost } from '../../../lambdas/core/model-pricing.ts';

const rate = (inputPerMillionUsd: number, outputPerMillionUsd: number) => ({
  inputPerMillionUsd,
  outputPerMillionUsd,
});

describe('the price of a model', () => {
  it('is the entry with the longest prefix of its id, even when a shorter one is listed first', () => {
    const prices = {
      acme: rate(1, 1),
      'acme-large': rate(9, 9),
      'acme-large-2': rate(4, 4),
      other: rate(7, 7),
    };
    expect(priceOf('acme-large-2-2026', prices)).toEqual(rate(4, 4));
    expect(priceOf('acme-large-1', prices)).toEqual(rate(9, 9));
    expect(priceOf('acme-small', prices)).toEqual(rate(1, 1));
  });

  it('is none for a model no entry is a prefix of', () => {
    expect(priceOf('gpt-4o', { acme: rate(1, 1), 'claude-3-haiku': rate(2, 2) })).toBeUndefined();
    expect(priceOf('gpt-4o', {})).toBeUndefined();
  });

  it('counts input and output tokens at their own rates, to a millionth of a dollar', () => {
    const usage = { model: 'claude-3-haiku-20240307', inputTokens: 3, outputTokens: 7, attempts: 2 };
    // 3 × 0.25 + 7 × 1.25 = 9.5 millionths of a dollar, rounded to 10
    expect(costUsd(usage, DEFAULT_MODEL_PRICES)).toBe(0.00001);
    expect(costUsd({ ...usage, inputTokens: 0, outputTokens: 0 }, DEFAULT_MODEL_PRICES)).toBe(0);
  });
});

describe('withCost', () => {
  const usage = { model: 'claude-sonnet-4-5', inputTokens: 2_000_000, outputTokens: 1_000_000, attempts: 1 };

  it('adds what the usage cost for a priced model', () => {
    expect(withCost(usage, DEFAULT_MODEL_PRICES)).toEqual({ ...usage, costUsd: 2 * 3 + 15 });
  });

  it('leaves the usage without a cost for a model the table has no price for', () => {
    const unpriced = { ...usage, model: 'local-llama' };
    const result = withCost(unpriced, DEFAULT_MODEL_PRICES);
    expect(result).toEqual(unpriced);
    expect('costUsd' in result).toBe(false);
  });
});
