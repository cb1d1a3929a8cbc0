/*
 * A rollout judged from its counters, one way through: counters from the store → each guarded
 * metric's moments per step (counters.ts) → the anytime-valid test (decision.ts) → one decision,
 * and the effect's failure-rate figures from the same test. Pure: the judge and the effect read
 * the counters, this is everything they decide on.
 */
import type { Rollout } from '../schemas/rollouts.ts';
import { candidateAt, legacyMoments, stepMomentsOf } from './counters.ts';
import {
  type Decision,
  decide,
  judgeMetric,
  type MetricJudgement,
  metricAlpha,
  type StepPosition,
} from './decision.ts';
import type { ArmCounts, Verdict } from './effect.ts';
import { guardOf, guardsOf } from './guards.ts';

export interface RolloutJudgement {
  judgements: MetricJudgement[];
  decision: Decision;
  /** Where the rollout stands: its step, how many, and the candidate's executions at this step. */
  position: StepPosition;
  /** Started before the moments were kept: judged on its failure counts only. */
  legacy: boolean;
  /** The effect's failure-rate figures (always-valid p-value and interval) and its four-valued verdict. */
  failureRate: { difference: number; ci95: [number, number]; pValue: number } | null;
  verdict: Verdict;
}

type Judged = Pick<Rollout, 'guardrails' | 'steps' | 'step' | 'minExecutions'>;

/** Judges a rollout on its counters. */
export function judgeCounters(rollout: Judged, counts: ArmCounts): RolloutJudgement {
  const legacy = rollout.guardrails === undefined || counts.counters === undefined;
  const guards = guardsOf(legacy ? {} : rollout);
  const step = rollout.step ?? 0;
  const counters = counts.counters ?? {};
  const momentsOf = (guard: (typeof guards)[number]) =>
    legacy ? legacyMoments(counts) : stepMomentsOf(counters, guard, step + 1);
  const failureGuarded = guards.some((guard) => guard.metric === 'failure_rate');
  // The effect's failure rate is one more test when it is not guarded: α stays the rollout's.
  const alpha = metricAlpha(guards.length + (failureGuarded ? 0 : 1));
  const judgements = guards.map((guard) => judgeMetric(guard, momentsOf(guard), alpha));
  const failure =
    judgements.find((j) => j.guard.metric === 'failure_rate') ??
    judgeMetric(guardOf({ metric: 'failure_rate' }), momentsOf(guardOf({ metric: 'failure_rate' })), alpha);
  const position: StepPosition = {
    step,
    steps: rollout.steps?.length ?? 1,
    candidateAtStep: legacy ? counts.candidate.executions : candidateAt(counters, step),
    minExecutions: rollout.minExecutions,
  };
  const decision = decide(judgements, position);
  return {
    judgements,
    decision,
    position,
    legacy,
    ...failureFigures(failure, counts, rollout.minExecutions),
  };
}

/** The effect's `failureRate` and `verdict` from the failure rate's judgement. */
export function failureFigures(
  failure: MetricJudgement,
  counts: { base: { executions: number }; candidate: { executions: number } },
  minExecutions: number,
): Pick<RolloutJudgement, 'failureRate' | 'verdict'> {
  const failureRate =
    failure.interval && failure.difference !== null && failure.pValue !== null
      ? { difference: failure.difference, ci95: failure.interval, pValue: failure.pValue }
      : null;
  const enough = counts.base.executions >= minExecutions && counts.candidate.executions >= minExecutions;
  const verdict: Verdict =
    !enough || failure.verdict === 'not_enough_data'
      ? 'not_enough_data'
      : failure.verdict === 'worse'
        ? 'worse'
        : failure.verdict === 'better'
          ? 'improved'
          : 'no_significant_change';
  return { failureRate, verdict };
}
