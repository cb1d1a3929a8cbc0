/*
 * claude-v1's cost before a run starts: the prompt the worker would send, built from the same
 * context, its estimated tokens priced at the table's input rate as prompt-cache writes (1.25 ×),
 * the most any of them can cost, so the estimate stays an upper bound of the prompt's price
 * whether the cache is cold or warm. heuristic-v1 calls no model: 0.
 */
import type { CostEstimate, CostEstimator } from '../../core/model-budget.ts';
import {
  CACHE_WRITE_PRICE_RATIO,
  type ModelPrice,
  type ModelPrices,
  priceOf,
} from '../../core/model-pricing.ts';
import type { SynthesisContextDeps } from '../../core/use-cases/synthesis-context.ts';

// The prompt builder is an on-demand part of the start function (lib/bundling.ts ON_DEMAND_PARTS).
const loadPromptTokens = () => import('./prompt-tokens.ts');

export interface CostEstimatorOptions {
  context: SynthesisContextDeps;
  /** The model claude-v1 asks (ANTHROPIC_MODEL, or BEDROCK_MODEL_ID on Bedrock). */
  model: string;
  prices: ModelPrices;
}

const NO_MODEL: CostEstimate = { model: null, promptTokens: 0, estimatedCostUsd: 0 };

export function makeCostEstimator({ context, model, prices }: CostEstimatorOptions): CostEstimator {
  return {
    async estimate(synthesisHandler, run) {
      if (synthesisHandler !== 'claude-v1') return NO_MODEL;
      const tokens = await (await loadPromptTokens()).promptTokens(context, run);
      const price = priceOf(model, prices);
      return {
        model,
        promptTokens: tokens,
        estimatedCostUsd: price === undefined ? null : estimatedPromptCostUsd(tokens, price),
      };
    },
  };
}

/** USD for a prompt of `tokens` input tokens all written to the cache (the dearest), rounded up to a millionth. */
export function estimatedPromptCostUsd(tokens: number, price: ModelPrice): number {
  return (
    Math.ceil(((tokens * CACHE_WRITE_PRICE_RATIO * price.inputPerMillionUsd) / 1_000_000) * 1_000_000) /
    1_000_000
  );
}
