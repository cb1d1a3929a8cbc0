/*
 * A team's model spend per calendar month (UTC), pure: the month a time falls in, when it resets,
 * the 429 of a run that would pass the team's budget, and the ports that count and estimate spend.
 */
import { RateLimitedError } from './errors.ts';
import type { SynthesisRun } from './schemas/runs.ts';

/** "2026-11" for any time in November 2026 (UTC). */
export const monthOf = (at: Date): string => at.toISOString().slice(0, 7);

/** The first instant of the month after `at` (UTC): when a month's budget starts again. */
export function monthResetsAt(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
}

const usd = (amount: number) => `$${amount.toFixed(amount > 0 && amount < 0.01 ? 4 : 2)}`;

/** The refusal of a run whose estimate would take the month's spend past the team's budget. */
export function budgetExceeded(
  budgetUsd: number,
  spentUsd: number,
  estimatedUsd: number,
  now: Date,
): RateLimitedError {
  const resets = monthResetsAt(now);
  return new RateLimitedError(
    `This run's estimated model cost of ${usd(estimatedUsd)} would take your team past its model budget of ` +
      `${usd(budgetUsd)} a month (${usd(spentUsd)} spent or reserved this month); the budget resets on ` +
      `${resets.toISOString()}. Start the run with synthesisHandler "heuristic-v1" (no model cost), or ask a team ` +
      'admin to raise modelBudgetUsdPerMonth (PATCH /teams/{teamId}/settings).',
    Math.max(1, Math.ceil((resets.getTime() - now.getTime()) / 1000)),
  );
}

/**
 * What a team's runs spent on the model in a month: the estimates of runs not yet ended and the
 * reported cost of those that ended. Every change is one atomic addition.
 */
export interface ModelSpendStore {
  /** Adds `usd` to the month's spend unless the sum would pass `budgetUsd`; false (nothing added) when it would. */
  reserve(teamId: string, month: string, usd: number, budgetUsd: number | null): Promise<boolean>;
  /** Adds `usd` (negative gives back) to the month's spend: a run's cost replacing its estimate. */
  adjust(teamId: string, month: string, usd: number): Promise<void>;
  /** The month's spend so far, 0 when nothing was spent. */
  spent(teamId: string, month: string): Promise<number>;
}

/** What the prompt of a run would cost, before the run starts. */
export interface CostEstimate {
  /** The model that would be asked; null for a handler that calls none. */
  model: string | null;
  /** The estimated input tokens of the first request (0 for a handler that calls no model). */
  promptTokens: number;
  /** Those tokens at the price table's input rate, rounded up to a millionth of a dollar; null when the table has no price for the model. */
  estimatedCostUsd: number | null;
}

/** Estimates a run's model cost from the prompt it would send (heuristic-v1: 0, no reads). */
export interface CostEstimator {
  estimate(
    synthesisHandler: string,
    run: Pick<SynthesisRun, 'pipelineId' | 'baseConfigurationId' | 'parentRunId' | 'rootRunId'>,
  ): Promise<CostEstimate>;
}

/**
 * An ended run's cost replacing its estimate in its month's spend (the reservation made when it
 * started): the model's reported cost, or nothing when it reported none.
 */
export async function settleModelSpend(
  spend: Pick<ModelSpendStore, 'adjust'>,
  run: Pick<SynthesisRun, 'teamId' | 'createdAt' | 'estimatedCostUsd' | 'usage'>,
): Promise<void> {
  const reserved = run.estimatedCostUsd ?? 0;
  const spent = run.usage?.costUsd ?? 0;
  if (reserved === 0 && spent === 0) return;
  await spend.adjust(run.teamId, monthOf(new Date(run.createdAt)), spent - reserved);
}
