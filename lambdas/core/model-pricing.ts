/**
 * What a run's model tokens cost: a price table per model (USD per million input and output
 * tokens, Anthropic's list prices, which Amazon Bedrock charges for the same models on demand)
 * matched by the longest model-id prefix, overridable per deployment (MODEL_PRICES, read in
 * wiring/model-prices.ts); prompt-cache reads and writes priced at their multiples of the input
 * price. Pure: no env, no I/O.
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

/** A prompt-cache read costs this much of the input price (both providers' 5-minute cache). */
export const CACHE_READ_PRICE_RATIO = 0.1;
/** A prompt-cache write costs this much of the input price. */
export const CACHE_WRITE_PRICE_RATIO = 1.25;

/**
 * List prices by model-id prefix (a dated id such as claude-sonnet-4-5-20250929 matches
 * claude-sonnet-4). A Bedrock id (us.anthropic.claude-sonnet-4-6-v1:0, an inference profile's or
 * model's ARN) is matched as it is first, so a deployment may price a profile of its own, and
 * otherwise by the Anthropic model name inside it.
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

const longestPrefix = (model: string, prices: ModelPrices): ModelPrice | undefined =>
  Object.entries(prices)
    .filter(([prefix]) => model.startsWith(prefix))
    .sort(([a], [b]) => b.length - a.length)[0]?.[1];

/**
 * The Anthropic model name inside a Bedrock id: "us.anthropic.claude-sonnet-4-6-v1:0" and
 * "arn:aws:bedrock:…:inference-profile/global.anthropic.claude-…" give "claude-sonnet-4-6-v1:0".
 */
export function anthropicModelName(model: string): string {
  const id = model.startsWith('arn:') ? (model.split('/').pop() ?? model) : model;
  const at = id.indexOf('anthropic.');
  return at < 0 ? id : id.slice(at + 'anthropic.'.length);
}

/** The price of `model`: the entry with the longest prefix of its id (or of its Anthropic name), if any. */
export function priceOf(model: string, prices: ModelPrices): ModelPrice | undefined {
  return longestPrefix(model, prices) ?? longestPrefix(anthropicModelName(model), prices);
}

/**
 * USD for the usage, to a millionth of a dollar; null when the table has no price for the model.
 * inputTokens includes the cache reads and writes, which are priced at their own ratios.
 */
export function costUsd(usage: SpentUsage, prices: ModelPrices): number | null {
  const rate = priceOf(usage.model, prices);
  if (!rate) return null;
  const reads = usage.cacheReadInputTokens ?? 0;
  const writes = usage.cacheWriteInputTokens ?? 0;
  const plain = Math.max(0, usage.inputTokens - reads - writes);
  const inputEquivalent = plain + reads * CACHE_READ_PRICE_RATIO + writes * CACHE_WRITE_PRICE_RATIO;
  const dollars =
    (inputEquivalent * rate.inputPerMillionUsd + usage.outputTokens * rate.outputPerMillionUsd) / 1_000_000;
  return Math.round(dollars * 1_000_000) / 1_000_000;
}

/** The usage with its `costUsd`; left without one when the table has no price for the model. */
export function withCost(usage: SpentUsage, prices: ModelPrices): SpentUsage {
  const cost = costUsd(usage, prices);
  return cost === null ? usage : { ...usage, costUsd: cost };
}
