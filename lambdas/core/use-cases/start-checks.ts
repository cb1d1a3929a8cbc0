/*
 * What starting a run checks besides the quota and the key: that a refinement's parent may be
 * refined (a generated, evaluated run of the same pipeline, its chain not full), and that the
 * run's estimated model cost fits the team's monthly budget (reserved until the run ends).
 */
import { ConflictError, NotFoundError, SynthesisFailure, ValidationError } from '../errors.ts';
import type { TeamSettingsStore } from '../lifecycle.ts';
import { budgetExceeded, type CostEstimator, type ModelSpendStore, monthOf } from '../model-budget.ts';
import type { Clock } from '../ports/common.ts';
import type { RunRepository } from '../ports/runs.ts';
import { assertSameTeam, type Principal } from '../principal.ts';
import type { SynthesisRun } from '../schemas/runs.ts';

/** The chain a refinement of `parentRunId` joins: its parent and its first run. */
export interface ChainPlace {
  parentRunId: string;
  rootRunId: string;
}

/**
 * The parent of a refinement, checked: a run of the caller's team (else 404/403 as reading it),
 * of the same pipeline (400), generated (409) and evaluated on at least one case (409).
 */
export async function checkParent(
  runs: RunRepository,
  principal: Principal,
  pipelineId: string,
  parentRunId: string,
): Promise<ChainPlace> {
  const parent = await runs.getVisible(parentRunId);
  if (!parent) throw new NotFoundError(`Synthesis run ${parentRunId} (parentRunId) does not exist.`);
  assertSameTeam(principal, parent.teamId);
  if (parent.pipelineId !== pipelineId) {
    throw new ValidationError(
      `parentRunId names run ${parentRunId} of pipeline ${parent.pipelineId}; a refinement's parent must be a run of pipeline ${pipelineId}.`,
      { details: [{ path: 'parentRunId', message: 'is a run of another pipeline' }] },
    );
  }
  if (parent.status !== 'generated') {
    throw new ConflictError(
      `Run ${parentRunId} is ${parent.status}; only a generated run can be refined. Start a run without parentRunId.`,
    );
  }
  if (!parent.evaluation || parent.evaluation.evaluated === 0) {
    throw new ConflictError(
      `Run ${parentRunId} has no evaluation yet: a refinement learns from it. Replay its cases first ` +
        `(pipeline-synthesis evaluate ${parentRunId} --exec "<runner>"), then start the refinement.`,
    );
  }
  return { parentRunId, rootRunId: parent.rootRunId ?? parent.id };
}

export interface BudgetDeps {
  estimator: CostEstimator;
  spend: ModelSpendStore;
  settings: TeamSettingsStore;
  clock: Clock;
}

/** A reservation of a run's estimate in its month's spend; `giveBack` undoes it (a run that never started). */
export interface BudgetReservation {
  estimatedCostUsd: number | null;
  giveBack(): Promise<void>;
}

/**
 * Estimates the run's model cost and reserves it in the team's month: a 429 naming the budget and
 * when it resets when the reservation would pass the team's modelBudgetUsdPerMonth.
 */
export async function reserveModelBudget(
  { estimator, spend, settings, clock }: BudgetDeps,
  run: SynthesisRun,
): Promise<BudgetReservation> {
  const estimate = await estimator.estimate(run.synthesisHandler, run).catch((error: unknown) => {
    // The pipeline, its base or the parent's set went away meanwhile: nothing to start from.
    if (error instanceof SynthesisFailure) throw new ConflictError(error.message, { cause: error });
    throw error;
  });
  const cost = estimate.estimatedCostUsd;
  if (cost === null || cost <= 0) return { estimatedCostUsd: cost, giveBack: async () => {} };
  const now = clock.now();
  const month = monthOf(new Date(run.createdAt));
  const { modelBudgetUsdPerMonth: budget } = await settings.get(run.teamId);
  if (!(await spend.reserve(run.teamId, month, cost, budget))) {
    throw budgetExceeded(budget ?? 0, await spend.spent(run.teamId, month), cost, now);
  }
  return { estimatedCostUsd: cost, giveBack: () => spend.adjust(run.teamId, month, -cost) };
}
