/* The budget checks of starting a run against DynamoDB Local, for tests that start heuristic-v1 runs (no model cost). */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { BudgetDeps } from '../../lambdas/core/use-cases/start-checks.ts';
import { makeModelSpendStore } from '../../lambdas/store/model-spend.ts';
import { makeTeamSettingsStore } from '../../lambdas/store/team-settings.ts';
import { systemClock } from '../../lambdas/wiring/clock.ts';

export function heuristicBudget(db: DynamoDBDocumentClient, dataTable: string): BudgetDeps {
  return {
    estimator: { estimate: async () => ({ model: null, promptTokens: 0, estimatedCostUsd: 0 }) },
    spend: makeModelSpendStore(db, dataTable),
    settings: makeTeamSettingsStore(db, dataTable),
    clock: systemClock,
  };
}
