import { describe, expect, it } from 'vitest';
import { costUsd, DEFAULT_MODEL_PRICES } from '../../../lambdas/core/model-pricing.ts';
import { modelPricesFromEnv } from '../../../lambdas/wiring/model-prices.ts';

const usage = (model: string) => ({ model, inputTokens: 1_000_000, outputTokens: 100_000, attempts: 1 });

describe('the model price table', () => {
  it('prices a dated model id by its longest listed prefix', () => {
    expect(costUsd(usage('claude-sonnet-4-5-20250929'), DEFAULT_MODEL_PRICES)).toBe(3 + 1.5);
    expect(costUsd(usage('claude-opus-4-5-20251101'), DEFAULT_MODEL_PRICES)).toBe(5 + 2.5);
    expect(costUsd(usage('claude-opus-4-1-20250805'), DEFAULT_MODEL_PRICES)).toBe(15 + 7.5);
  });

  it('says null, not 0, for a model it has no price for', () => {
    expect(costUsd(usage('some-other-model'), DEFAULT_MODEL_PRICES)).toBeNull();
  });

  it('takes a deployment’s own prices from MODEL_PRICES, over the list prices', () => {
    const prices = modelPricesFromEnv({
      MODEL_PRICES: JSON.stringify({ 'claude-sonnet-4': { inputPerMillionUsd: 1, outputPerMillionUsd: 2 } }),
    });
    expect(costUsd(usage('claude-sonnet-4-6'), prices)).toBe(1 + 0.2);
    expect(costUsd(usage('claude-haiku-4-5'), prices)).toBe(1 + 0.5);
  });

  it('refuses a MODEL_PRICES that is not a price table', () => {
    expect(() => modelPricesFromEnv({ MODEL_PRICES: '{oops' })).toThrow('MODEL_PRICES is not JSON');
    expect(() => modelPricesFromEnv({ MODEL_PRICES: '{"m": {"inputPerMillionUsd": -1}}' })).toThrow(
      'MODEL_PRICES is not a price table',
    );
  });
});
