/**
 * What a run's model tokens cost: a price table per model (USD per million input and output
 * tokens, Anthropic's list prices) matched by the longest model-id prefix, overridable per
 * deployment (MODEL_PRICES, read in wiring/model-prices.ts). Pure: no env, no I/O.
 */
import * as z from 'zod/mini';
import type { SpentUsage } from './errors.ts';

export const modelPriceSchema = z.strictObject({
  inputPerMillionUsd: z.number().check(z.gte(0)),
  outputPerMillionUsd: z.number().check(z.gte(0)),
});
export type ModelPrice = z.infer<typeof modelPriceSchema>;
export const modelPricesSchema = z.record(z.string().check(z.minLength(1)), modelPriceSchema);
export type ModelPrices = Readonly<Record<string, ModelPrice>>;

const price = (inputPerMillionUsd: number, outputPerMillionUsd: number): ModelPrice => ({
  inputPerMillionUsd,
  outputPerMillionUsd,
});

/**
 * List prices by model-id prefix (a dated id such as claude-sonnet-4-5-20250929 matches
 * claude-sonnet-4). Cache writes and reads are counted as input tokens at the input price, which
 * over-counts a little: a bound, not an invoice.
 */
export const DEFAULT_MODEL_PRICES: ModelPrices = {
  'claude-opus-4-5': price(5, 25),
  'claude-opus-4': price(15, 75),
  'claude-sonnet-4': price(3, 15),
  'claude-haiku-4-5': price(1, 5),
  'claude-3-7-sonnet': price(3, 15),
  'claude-3-5-sonnet': price(3, 15),
  'claude-3-5-haiku': price(0.8, 4),
  'claude-3-opus': price(15, 75),
  'claude-3-haiku': price(0.25, 1.25),
};

/** The price of `model`: the entry with the longest prefix of its id, if any. */
export function priceOf(model: string, prices: ModelPrices): ModelPrice | undefined {
  return Object.entries(prices)
    .filter(([prefix]) => model.startsWith(prefix))
    .sort(([a], [b]) => b.length - a.length)[0]?.[1];
}

/** USD for the usage, to a millionth of a dollar; null when the table has no price for the model. */
export function costUsd(usage: SpentUsage, prices: ModelPrices): number | null {
  const rate = priceOf(usage.model, prices);
  if (!rate) return null;
  const dollars =
    (usage.inputTokens * rate.inputPerMillionUsd + usage.outputTokens * rate.outputPerMillionUsd) / 1_000_000;
  return Math.round(dollars * 1_000_000) / 1_000_000;
}

/** The usage with its `costUsd`; left without one when the table has no price for the model. */
export function withCost(usage: SpentUsage, prices: ModelPrices): SpentUsage {
  const cost = costUsd(usage, prices);
  return cost === null ? usage : { ...usage, costUsd: cost };
}
