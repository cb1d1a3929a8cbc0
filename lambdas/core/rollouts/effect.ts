/*
 * The measured effect of an approval (GET /synthesis-runs/{id}/effect): two arms of
 * executions, their failure rates compared, per touched slot from `slotResults`, and the signals
 * citing each arm's executions. Pure: the use case reads the executions, this counts them.
 */
import type { Execution, Signal } from '../schemas/records.ts';

/** What the figures read of an execution, and of a signal (the executions' own records or kept ones). */
type Measured = Pick<Execution, 'id' | 'status' | 'durationMs' | 'startedAt' | 'slotResults'>;
type Citing = Pick<Signal, 'executionId' | 'severity'> & Partial<Signal>;

import { judgeMetric, ROLLOUT_ALPHA } from './decision.ts';
import { guardOf } from './guards.ts';
import { failureFigures } from './judge.ts';
import { percentile } from './statistics.ts';

/** At most this many of the newest executions per arm are measured. */
export const EFFECT_ARM_LIMIT = 1_000;
/** At most this many citing signals (the newest recorded) are read when an effect is measured from scratch. */
export const EFFECT_SIGNAL_LIMIT = 5_000;
/** The minimum executions per arm outside a rollout. */
export const BEFORE_AFTER_MIN_EXECUTIONS = 30;

export type Verdict = 'improved' | 'worse' | 'no_significant_change' | 'not_enough_data';

export interface SlotArm {
  executions: number;
  failed: number;
  failureRate: number | null;
  durationMs: { p50: number; p95: number } | null;
}

export interface Arm extends SlotArm {
  signals: { info: number; warning: number; critical: number };
  from: string | null;
  to: string | null;
}

export interface EffectFigures {
  arms: { base: Arm; applied: Arm };
  slots: Array<{ slotId: string; base: SlotArm; applied: SlotArm }>;
  failureRate: { difference: number; ci95: [number, number]; pValue: number } | null;
  verdict: Verdict;
}

function durations(values: number[]): SlotArm['durationMs'] {
  const p50 = percentile(values, 50);
  const p95 = percentile(values, 95);
  return p50 === null || p95 === null ? null : { p50, p95 };
}

function slotArm(executions: Measured[], slotId: string): SlotArm {
  const results = executions.flatMap((execution) =>
    (execution.slotResults ?? []).filter((result) => result.slotId === slotId),
  );
  const failed = results.filter((result) => result.status === 'failed').length;
  return {
    executions: results.length,
    failed,
    failureRate: results.length === 0 ? null : failed / results.length,
    durationMs: durations(results.map((result) => result.durationMs)),
  };
}

function arm(executions: Measured[], signals: Citing[]): Arm {
  const failed = executions.filter((execution) => execution.status === 'failed').length;
  const ids = new Set(executions.map((execution) => execution.id));
  const counts = { info: 0, warning: 0, critical: 0 };
  for (const signal of signals) {
    if (signal.executionId !== undefined && ids.has(signal.executionId)) counts[signal.severity] += 1;
  }
  const times = executions.map((execution) => execution.startedAt).sort();
  return {
    executions: executions.length,
    failed,
    failureRate: executions.length === 0 ? null : failed / executions.length,
    durationMs: durations(executions.map((execution) => execution.durationMs)),
    signals: counts,
    from: times[0] ?? null,
    to: times.at(-1) ?? null,
  };
}

/** Compares the arms: a verdict once both have `minExecutions`, the anytime-valid interval excluding 0 deciding improved or worse. */
export function measureEffect(input: {
  base: Measured[];
  applied: Measured[];
  signals: Citing[];
  slotIds: string[];
  minExecutions: number;
}): EffectFigures {
  const compared = compare(
    arm(input.base, input.signals),
    arm(input.applied, input.signals),
    input.minExecutions,
  );
  return {
    arms: { base: compared.base, applied: compared.applied },
    slots: input.slotIds.map((slotId) => ({
      slotId,
      base: slotArm(input.base, slotId),
      applied: slotArm(input.applied, slotId),
    })),
    ...compared.result,
  };
}

/** A rollout's exact counts per arm, kept with the recording (every execution, not a sample). */
export interface ArmCounts {
  base: { executions: number; failed: number };
  candidate: { executions: number; failed: number };
  /** The guarded metrics' counters by name (core/rollouts/counters.ts); none kept before guardrails. */
  counters?: Record<string, number>;
}

/**
 * The figures with each arm's executions and failures from the rollout's exact counts, and the
 * anytime-valid test and verdict on them; durations, signals and slot figures stay those of the sample (the
 * newest EFFECT_ARM_LIMIT executions an arm). Counts that do not cover the sample (a rollout
 * started before the counts were kept) leave the figures as they are.
 */
export function withExactCounts(
  figures: EffectFigures,
  counts: ArmCounts,
  minExecutions: number,
): EffectFigures {
  const { base, applied } = figures.arms;
  if (counts.base.executions < base.executions || counts.candidate.executions < applied.executions)
    return figures;
  const exact = (arm: Arm, count: { executions: number; failed: number }): Arm => ({
    ...arm,
    executions: count.executions,
    failed: count.failed,
    failureRate: count.executions === 0 ? null : count.failed / count.executions,
  });
  const compared = compare(exact(base, counts.base), exact(applied, counts.candidate), minExecutions);
  return { ...figures, arms: { base: compared.base, applied: compared.applied }, ...compared.result };
}

/** The failure rates compared with the anytime-valid test (core/rollouts/decision.ts), at the rollout's α. */
function compare(base: Arm, applied: Arm, minExecutions: number) {
  const rate = (arm: Arm) => ({ n: arm.executions, sum: arm.failed, sumSq: arm.failed });
  const failure = judgeMetric(
    guardOf({ metric: 'failure_rate' }),
    [{ base: rate(base), candidate: rate(applied) }],
    ROLLOUT_ALPHA,
  );
  const counts = { base: { executions: base.executions }, candidate: { executions: applied.executions } };
  return { base, applied, result: failureFigures(failure, counts, minExecutions) };
}
