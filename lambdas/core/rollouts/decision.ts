/*
 * The judgement of a rollout from its guarded metrics' moments: per metric the anytime-valid
 * interval of candidate − base (the steps compared within themselves, then weighted), a verdict,
 * and one decision for the rollout — roll back when a metric is shown worse, move up a step or
 * promote only when every metric is shown within its threshold. Pure; the bench runs this code.
 */
import { formatDelta, formatFigure, GUARD_METRICS, type Guard, guardName } from './guards.ts';
import { addMoments, meanOf, NO_MOMENTS, type StepMoments, stratumOf } from './moments.ts';
import { oneSidedHalfWidth, type Stratum, stratifiedInterval } from './sequential.ts';

/**
 * The rollout's error rate as a whole. A rollback or a "better"/"worse" verdict may come from any
 * one metric, so those tests share it (Bonferroni, `metricAlpha`); a promotion needs every metric
 * shown within its threshold at once, so a false promotion needs the one truly worse metric's own
 * bound to be wrong, and each metric's non-inferiority bound keeps the whole α (an
 * intersection-union test).
 */
export const ROLLOUT_ALPHA = 0.05;
/** No verdict on a metric while an arm has fewer observations of it. */
export const MIN_OBSERVATIONS = 30;

export type MetricVerdict = 'worse' | 'better' | 'non_inferior' | 'inconclusive' | 'not_enough_data';

/** One guarded metric judged: both arms, candidate − base, its interval, a verdict. */
export interface MetricJudgement {
  guard: Guard;
  base: { n: number; mean: number | null };
  applied: { n: number; mean: number | null };
  /** Applied (candidate) minus base; null while an arm has no observation. */
  difference: number | null;
  /** Its anytime-valid interval at the metric's share of α; null without a verdict. */
  interval: [number, number] | null;
  /**
   * How far the difference may reach on the worse side, as a difference (candidate − base): the
   * worse end of the anytime-valid interval at the rollout's whole α. Within the threshold: non-inferior.
   */
  worseBound: number | null;
  pValue: number | null;
  verdict: MetricVerdict;
}

/** The per-metric α: the rollout's α shared by `count` tests. */
export const metricAlpha = (count: number) => ROLLOUT_ALPHA / Math.max(1, count);

/** The interval oriented so that positive is worse: [low, high] of (worse side) − (better side). */
export function worseInterval(guard: Guard, interval: [number, number]): [number, number] {
  return guard.direction === 'lower_is_better' ? interval : [-interval[1], -interval[0]];
}

/**
 * Judges one metric from its moments per step: worse or better at `alpha` (the metric's share),
 * non-inferior when the one-sided worse bound at `boundAlpha` (the rollout's) lies within the threshold.
 */
export function judgeMetric(
  guard: Guard,
  steps: readonly StepMoments[],
  alpha: number,
  boundAlpha: number = ROLLOUT_ALPHA,
): MetricJudgement {
  const binary = GUARD_METRICS[guard.metric].binary;
  let base = NO_MOMENTS;
  let applied = NO_MOMENTS;
  for (const step of steps) {
    base = addMoments(base, step.base);
    applied = addMoments(applied, step.candidate);
  }
  const baseMean = meanOf(base);
  const appliedMean = meanOf(applied);
  const arms = { base: { n: base.n, mean: baseMean }, applied: { n: applied.n, mean: appliedMean } };
  const difference = baseMean === null || appliedMean === null ? null : appliedMean - baseMean;
  const empty = {
    guard,
    ...arms,
    difference,
    interval: null,
    worseBound: null,
    pValue: null,
    verdict: 'not_enough_data' as const,
  };
  if (base.n < MIN_OBSERVATIONS || applied.n < MIN_OBSERVATIONS) return empty;
  const strata: Stratum[] = [];
  for (const step of steps) {
    const stratum = stratumOf(step, binary);
    if (stratum) strata.push(stratum);
  }
  const sequence = stratifiedInterval(strata, alpha);
  if (!sequence) return empty;
  // A difference of rates lies in [−1, 1]: so does its interval.
  const interval: [number, number] = binary
    ? [Math.max(-1, sequence.interval[0]), Math.min(1, sequence.interval[1])]
    : sequence.interval;
  const [low, high] = worseInterval(guard, interval);
  // The promotion's one-sided question, "no worse than the threshold", at the rollout's whole α.
  const reach = oneSidedHalfWidth(sequence.s2, sequence.n, boundAlpha);
  const unclamped =
    guard.direction === 'lower_is_better' ? sequence.estimate + reach : sequence.estimate - reach;
  const worseBound = binary ? Math.max(-1, Math.min(1, unclamped)) : unclamped;
  const worseBy = guard.direction === 'lower_is_better' ? worseBound : -worseBound;
  const verdict: MetricVerdict =
    low > 0 ? 'worse' : high < 0 ? 'better' : worseBy <= guard.threshold ? 'non_inferior' : 'inconclusive';
  return {
    guard,
    ...arms,
    // The stratified estimate: the steps' differences weighted (the pooled means can mislead across steps).
    difference: sequence.estimate,
    interval,
    worseBound,
    pValue: sequence.pValue,
    verdict,
  };
}

/** Where the rollout stands: its current step, how many, and the candidate's executions in it. */
export interface StepPosition {
  step: number;
  steps: number;
  candidateAtStep: number;
  minExecutions: number;
}

export type RolloutAction = 'roll_back' | 'step_up' | 'promote' | 'keep';

export interface Decision {
  action: RolloutAction;
  /** The metric that decided a rollback. */
  decidedBy: MetricJudgement | null;
  /** In words: why, with both arms' figures, the interval and the threshold. */
  reason: string;
  /** In words: what happens next while it keeps collecting. */
  next: string;
}

const count = (value: number) => value.toLocaleString('en-US');

/**
 * "failure rate 2.10 % (21 of 1,000) against 1.00 % (10 of 1,000), difference …"; `withBound` adds
 * the worst case a promotion rests on (a rollback rests on the interval alone).
 */
export function describeJudgement(j: MetricJudgement, withBound = false): string {
  const binary = GUARD_METRICS[j.guard.metric].binary;
  const figure = (arm: { n: number; mean: number | null }) =>
    arm.mean === null
      ? 'n/a'
      : binary
        ? `${formatFigure(j.guard, arm.mean)} (${count(Math.round(arm.mean * arm.n))} of ${count(arm.n)})`
        : `${formatFigure(j.guard, arm.mean)} (n = ${count(arm.n)})`;
  const interval = j.interval
    ? `, difference ${formatDelta(j.guard, j.difference ?? 0)} (interval ${formatDelta(j.guard, j.interval[0])} to ${formatDelta(j.guard, j.interval[1])}` +
      `${withBound && j.worseBound !== null ? `, at worst ${formatDelta(j.guard, j.worseBound)} at 95 %` : ''})`
    : '';
  return (
    `${guardName(j.guard)} ${figure(j.applied)} on the candidate against ${figure(j.base)} on the base` +
    `${interval}, threshold ${formatDelta(j.guard, j.guard.threshold)}`
  );
}

/**
 * What the judgements call for, without words (the bench asks this at every look): the first
 * metric shown worse rolls back; every metric within its threshold with minExecutions on the
 * candidate at this step moves up a step, or promotes at the last; else keep collecting.
 */
export function actionOf(
  judgements: readonly MetricJudgement[],
  position: StepPosition,
): { action: RolloutAction; decidedBy: MetricJudgement | null } {
  let within = position.candidateAtStep >= position.minExecutions;
  for (const j of judgements) {
    if (j.verdict === 'worse') return { action: 'roll_back', decidedBy: j };
    if (j.verdict !== 'non_inferior' && j.verdict !== 'better') within = false;
  }
  if (!within) return { action: 'keep', decidedBy: null };
  return { action: position.step >= position.steps - 1 ? 'promote' : 'step_up', decidedBy: null };
}

/** The rollout's decision from its metrics' judgements, in words (rollback and promotion flags apart: the judge's). */
export function decide(judgements: readonly MetricJudgement[], position: StepPosition): Decision {
  const { action, decidedBy } = actionOf(judgements, position);
  const last = position.step >= position.steps - 1;
  const stepWords = `step ${position.step + 1} of ${position.steps}`;
  if (decidedBy) {
    return {
      action,
      decidedBy,
      reason: `${guardName(decidedBy.guard)} is worse on the candidate: ${describeJudgement(decidedBy)}`,
      next: 'rolls back',
    };
  }
  if (action !== 'keep') {
    return {
      action,
      decidedBy: null,
      reason: `every guarded metric is within its threshold at ${stepWords}: ${judgements.map((j) => describeJudgement(j, true)).join('; ')}`,
      next: last ? 'promotes' : `moves to step ${position.step + 2} of ${position.steps}`,
    };
  }
  const enough = position.candidateAtStep >= position.minExecutions;
  const pending = judgements
    .filter((j) => j.verdict !== 'non_inferior' && j.verdict !== 'better')
    .map((j) => `${guardName(j.guard)} within ${formatDelta(j.guard, j.guard.threshold)}`);
  // "moves to step 2 of 3 once the candidate has 200 executions at step 1 (40 so far) and the
  // figures show failure rate within 1.00 points"; at the last step "promotes at step 3 of 3 once …".
  const here = position.steps === 1 ? '' : last ? ' there' : ` at step ${position.step + 1}`;
  const waits = [
    ...(enough
      ? []
      : [
          `the candidate has ${count(position.minExecutions)} executions${here} (${count(position.candidateAtStep)} so far)`,
        ]),
    ...(pending.length > 0 ? [`the figures show ${pending.join(' and ')}`] : []),
  ];
  const move = last
    ? position.steps === 1
      ? 'promotes'
      : `promotes at ${stepWords}`
    : `moves to step ${position.step + 2} of ${position.steps}`;
  return {
    action,
    decidedBy: null,
    reason: 'still collecting',
    next: `${move} once ${waits.join(' and ')}`,
  };
}
