/*
 * The cost estimate of a run before it starts, as the API's start function builds it: the prompt
 * claude-v1 would send, from the same stores the worker reads, priced at the worker's table.
 */
import * as z from 'zod/mini';
import type { CostEstimator } from '../core/model-budget.ts';
import { makeCostEstimator } from '../synthesis/claude/estimate.ts';
import { bedrockModelIdFromEnv, modelProviderFromEnv } from './bedrock.ts';
import { systemClock } from './clock.ts';
import { readConfig } from './config.ts';
import { modelPricesFromEnv } from './model-prices.ts';
import {
  evaluationStoreFromEnv,
  pipelineReadsFromEnv,
  runRepositoryFromEnv,
  teamSettingsStoreFromEnv,
} from './repositories.ts';

/** The model claude-v1 asks when ANTHROPIC_MODEL is unset (wiring/anthropic.ts's default). */
const DEFAULT_MODEL = 'claude-sonnet-4-6';

/** The model the worker asks: BEDROCK_MODEL_ID when MODEL_PROVIDER is bedrock, else ANTHROPIC_MODEL. */
function modelFromEnv(): string {
  const config = readConfig({ ANTHROPIC_MODEL: z.optional(z.string()) });
  if (modelProviderFromEnv() === 'bedrock') return bedrockModelIdFromEnv();
  return config.ANTHROPIC_MODEL?.trim() || DEFAULT_MODEL;
}

export function costEstimatorFromEnv(): CostEstimator {
  return makeCostEstimator({
    context: {
      pipelines: pipelineReadsFromEnv(),
      settings: teamSettingsStoreFromEnv(),
      clock: systemClock,
      runs: runRepositoryFromEnv(),
      evaluations: evaluationStoreFromEnv(),
    },
    model: modelFromEnv(),
    prices: modelPricesFromEnv(),
  });
}
