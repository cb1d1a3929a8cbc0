/*
 * The effect's judged figures: `metrics[]` (every guarded metric from the rollout's counters, or
 * the failure rate of a before/after comparison), the failure-rate figures and verdict from the
 * same test, what happens next, and notes in words. Pure; the sampled slot figures stay apart.
 */
import type { Effect, Rollout } from '../schemas/rollouts.ts';
import { judgeMetric, type MetricJudgement, ROLLOUT_ALPHA } from './decision.ts';
import type { ArmCounts } from './effect.ts';
import { GUARD_METRICS, guardOf } from './guards.ts';
import { failureFigures, judgeCounters } from './judge.ts';

export type EffectMetric = NonNullable<Effect['metrics']>[number];
type Judged = Pick<Effect, 'metrics' | 'notes' | 'next' | 'progress' | 'failureRate' | 'verdict'>;

/** Before against after compares different times, not randomized arms: said beside its figures. */
export const BEFORE_AFTER_NOTE =
  'Before/after, not randomized: the applied configuration ran later than the base, and traffic and ' +
  'inputs change over time, so a difference may come from the time rather than the change. A rollout ' +
  'serves both at once and measures the change alone.';

/** A rollout started before the guarded metrics were counted: its failure counts only. */
export const LEGACY_NOTE =
  'This rollout started before sums were kept with the recording: it is judged on its failure ' +
  'counts only (no duration, tokens or signal metrics).';

export function effectMetricOf(j: MetricJudgement): EffectMetric {
  return {
    metric: j.guard.metric,
    kind: j.guard.kind,
    direction: j.guard.direction,
    threshold: j.guard.threshold,
    unit: GUARD_METRICS[j.guard.metric].unit,
    base: j.base,
    applied: j.applied,
    difference: j.difference,
    interval: j.interval,
    worseBound: j.worseBound,
    verdict: j.verdict,
  };
}

/** A rollout's judged figures from its counters. */
export function rolloutFigures(rollout: Rollout, counts: ArmCounts): Judged {
  const judged = judgeCounters(rollout, counts);
  const ended = rollout.status !== 'active';
  return {
    metrics: judged.judgements.map(effectMetricOf),
    notes: judged.legacy ? [LEGACY_NOTE] : [],
    next: ended ? null : nextWords(rollout, judged.decision.next),
    progress: ended
      ? null
      : {
          step: judged.position.step,
          steps: judged.position.steps,
          percent: rollout.percent,
          candidateExecutions: judged.position.candidateAtStep,
          minExecutions: judged.position.minExecutions,
        },
    failureRate: judged.failureRate,
    verdict: judged.verdict,
  };
}

/** The judge's next move, said as this rollout's flags let it happen (autoPromote, autoRollback off: by hand). */
function nextWords(rollout: Pick<Rollout, 'autoPromote' | 'autoRollback'>, next: string): string {
  if (!rollout.autoPromote && next.startsWith('promotes'))
    return `can be promoted by hand${next.slice('promotes'.length)} (autoPromote is off)`;
  if (!rollout.autoRollback && next === 'rolls back')
    return 'can be rolled back by hand (autoRollback is off)';
  return next;
}

/** A before/after effect's judged figures: the failure rate of its two (sampled) arms, and the note. */
export function beforeAfterFigures(effect: Pick<Effect, 'arms' | 'minExecutions'>): Judged {
  const rate = (arm: Effect['arms']['base']) => ({ n: arm.executions, sum: arm.failed, sumSq: arm.failed });
  const failure = judgeMetric(
    guardOf({ metric: 'failure_rate' }),
    [{ base: rate(effect.arms.base), candidate: rate(effect.arms.applied) }],
    ROLLOUT_ALPHA,
  );
  const counts = {
    base: { executions: effect.arms.base.executions },
    candidate: { executions: effect.arms.applied.executions },
  };
  return {
    metrics: [effectMetricOf(failure)],
    notes: [BEFORE_AFTER_NOTE],
    next: null,
    progress: null,
    ...failureFigures(failure, counts, effect.minExecutions),
  };
}
