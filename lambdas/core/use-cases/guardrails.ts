/*
 * The guardrails' judge: measures an active rollout's effect and lets the policy that acts on its
 * verdict (core/rollouts/guardrails.ts) promote it or roll it back; the sweeper's pass judges
 * every active rollout, the guardrail queue's consumer those a batch names.
 */
import { ConflictError } from '../errors.ts';
import { SYSTEM_ACTOR } from '../events.ts';
import type { RolloutRepository } from '../ports/rollouts.ts';
import type { RunRepository } from '../ports/runs.ts';
import { describeArms } from '../rollouts/effect.ts';
import { policyActingOn } from '../rollouts/guardrails.ts';
import type { Rollout } from '../schemas/rollouts.ts';
import { measureMaintained, NO_WINDOW, rolloutPlan, touchedSlots } from './effect.ts';
import { endRollout, type RolloutDeps } from './rollouts.ts';

/** How many active rollouts one guardrail pass judges at most. */
export const GUARDRAIL_BATCH = 100;

export interface GuardrailOutcome {
  rolloutId: string;
  pipelineId: string;
  action: 'promoted' | 'rolled_back' | 'kept' | 'lost_race';
  reason: string;
}

/**
 * What judging a rollout needs; `runs` gives a rollout judged before its effect was ever read the
 * figures of its touched slots too.
 */
export type JudgeDeps = Pick<RolloutDeps, 'pipelines' | 'clock' | 'ids'> & {
  /** The rollouts, and the effect's reads the judge measures them with. */
  rollouts: RolloutRepository;
  runs: RunRepository;
};

/**
 * The guardrail: judges every active rollout with `minExecutions` in both arms (judgeRollout), at
 * most GUARDRAIL_BATCH a pass. The sweeper's pass, the backstop of the per-batch checks.
 */
export function makeJudgeRollouts(deps: JudgeDeps) {
  return async (): Promise<GuardrailOutcome[]> => {
    const active = await deps.rollouts.listActive(GUARDRAIL_BATCH);
    const outcomes: GuardrailOutcome[] = [];
    for (const rollout of active) outcomes.push(await judgeRollout(deps, rollout));
    return outcomes;
  };
}

/**
 * Judges one active rollout: the guardrail it has on that acts on the measured verdict ends it
 * (GUARDRAIL_POLICIES: `worse` with autoRollback rolls it back, `improved` or
 * `no_significant_change` with autoPromote promotes it), by "system", the figures in endReason.
 * A person (or another judge) ending it at the same moment wins quietly: "lost_race".
 */
export async function judgeRollout(deps: JudgeDeps, rollout: Rollout): Promise<GuardrailOutcome> {
  // The same maintained measure as the effect endpoint's (one item, the few executions since).
  const kept = await deps.rollouts.keptEffect(rollout.pipelineId, rollout.synthesisRunId);
  let slotIds = kept?.state?.slotIds;
  if (!slotIds) {
    const run = await deps.runs.get(rollout.synthesisRunId);
    slotIds = run ? touchedSlots(run) : [];
  }
  const figures = await measureMaintained(
    deps.rollouts,
    rollout.pipelineId,
    rolloutPlan(rollout, slotIds),
    kept,
    deps.clock.now(),
    NO_WINDOW,
    // The judge reads no early state: it runs in a function of its own, apart from the effect endpoint.
    null,
  );
  const policy = policyActingOn(rollout, figures.verdict);
  const base = { rolloutId: rollout.id, pipelineId: rollout.pipelineId };
  if (!policy) return { ...base, action: 'kept', reason: figures.verdict };
  const reason = `Guardrail: ${figures.verdict.replaceAll('_', ' ')}: ${describeArms(figures)}; ${policy.ends.replace('_', ' ')} automatically.`;
  try {
    await endRollout(deps, rollout, policy.ends, SYSTEM_ACTOR, reason);
    return { ...base, action: policy.ends, reason };
  } catch (error) {
    if (!(error instanceof ConflictError)) throw error;
    return { ...base, action: 'lost_race', reason: error.message };
  }
}
