/*
 * The cost estimate of a run before it starts, as the API's start function builds it: the prompt
 * claude-v1 would send, from the same stores the worker reads, priced at the worker's table.
 */
import * as z from 'zod/mini';
import type { CostEstimator } from '../core/model-budget.ts';
import { makeCostEstimator } from '../synthesis/claude/estimate.ts';
import { systemClock } from './clock.ts';
import { readConfig } from './config.ts';
import { modelPricesFromEnv } from './model-prices.ts';
import {
  evaluationStoreFromEnv,
  pipelineRepositoryFromEnv,
  runRepositoryFromEnv,
  teamSettingsStoreFromEnv,
} from './repositories.ts';

/** The model claude-v1 asks when ANTHROPIC_MODEL is unset (wiring/anthropic.ts's default). */
const DEFAULT_MODEL = 'claude-sonnet-4-6';

export function costEstimatorFromEnv(): CostEstimator {
  const config = readConfig({ ANTHROPIC_MODEL: z.optional(z.string()) });
  return makeCostEstimator({
    context: {
      pipelines: pipelineRepositoryFromEnv(),
      settings: teamSettingsStoreFromEnv(),
      clock: systemClock,
      runs: runRepositoryFromEnv(),
      evaluations: evaluationStoreFromEnv(),
    },
    model: config.ANTHROPIC_MODEL?.trim() || DEFAULT_MODEL,
    prices: modelPricesFromEnv(),
  });
}
