/**
 * The worker's price table: core/model-pricing.ts's list prices, with entries of the MODEL_PRICES
 * environment variable (JSON `{"model-prefix": {"inputPerMillionUsd": n, "outputPerMillionUsd": n}}`,
 * set by the stack from `-c modelPrices=…`) added or replacing them. A bad value fails the cold start.
 */
import * as z from 'zod/mini';
import { DEFAULT_MODEL_PRICES, type ModelPrices, modelPricesSchema } from '../core/model-pricing.ts';

export function modelPricesFromEnv(env: NodeJS.ProcessEnv = process.env): ModelPrices {
  const raw = env.MODEL_PRICES;
  if (raw === undefined || raw.trim() === '') return DEFAULT_MODEL_PRICES;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new Error('MODEL_PRICES is not JSON.');
  }
  const result = modelPricesSchema.safeParse(parsed);
  if (!result.success) throw new Error(`MODEL_PRICES is not a price table: ${z.prettifyError(result.error)}`);
  return { ...DEFAULT_MODEL_PRICES, ...result.data };
}
