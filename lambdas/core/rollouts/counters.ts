/*
 * The counters a rollout keeps with the recording, by name (`<step>.<arm>.<field>`), and how they
 * become each guarded metric's moments per step: what an execution or a signal adds, and what the
 * store's summed shards give back. The store writes and sums these names; it never reads them.
 */
import type { Execution } from '../schemas/records.ts';
import { counterField, type Guard } from './guards.ts';
import { type Moments, NO_MOMENTS, type StepMoments } from './moments.ts';

export type CounterArm = 'b' | 'c';

/** Summed counters of a rollout, by name. */
export type Counters = Record<string, number>;

/** `<step>.<arm>.<part>`: `n` executions, `f` failed; `<field>.n|s|q` for the other metrics. */
export const counterName = (step: number, arm: CounterArm, part: string) => `${step}.${arm}.${part}`;

/** An execution's tokens: the sum of its slots' input and output tokens, or null when no slot reports any. */
export function tokensOf(execution: Pick<Execution, 'slotResults'>): number | null {
  let total: number | null = null;
  for (const slot of execution.slotResults ?? []) {
    if (slot.inputTokens === undefined && slot.outputTokens === undefined) continue;
    total = (total ?? 0) + (slot.inputTokens ?? 0) + (slot.outputTokens ?? 0);
  }
  return total;
}

/** Adds `sign` × the moments of `value` under `field` to the deltas. */
function addValue(deltas: Map<string, number>, prefix: string, field: string, value: number, sign: number) {
  const add = (name: string, by: number) => deltas.set(name, (deltas.get(name) ?? 0) + by);
  add(`${prefix}.${field}.n`, sign);
  add(`${prefix}.${field}.s`, sign * value);
  add(`${prefix}.${field}.q`, sign * value * value);
}

/**
 * What an execution adds to its arm's counters at `step` (`sign` −1 takes it off again, for a
 * revision): executions, failures, duration (n is the executions), tokens when reported.
 */
export function executionDeltas(
  execution: Pick<Execution, 'status' | 'durationMs' | 'slotResults'>,
  arm: CounterArm,
  step: number,
  sign: 1 | -1,
  into: Map<string, number> = new Map(),
): Map<string, number> {
  const prefix = `${step}.${arm}`;
  const add = (name: string, by: number) => into.set(name, (into.get(name) ?? 0) + by);
  add(`${prefix}.n`, sign);
  if (execution.status === 'failed') add(`${prefix}.f`, sign);
  add(`${prefix}.d.s`, sign * execution.durationMs);
  add(`${prefix}.d.q`, sign * execution.durationMs * execution.durationMs);
  const tokens = tokensOf(execution);
  if (tokens !== null) addValue(into, prefix, 't', tokens, sign);
  return into;
}

/** What a signal's value adds to the arm and step of the execution it cites. */
export function signalDeltas(
  kind: string,
  value: number,
  arm: CounterArm,
  step: number,
  into: Map<string, number> = new Map(),
): Map<string, number> {
  addValue(into, `${step}.${arm}`, counterField({ metric: 'signal', kind }), value, 1);
  return into;
}

/** The moments of one arm at one step for a guard, from summed counters. */
function armMoments(counters: Counters, guard: Guard, step: number, arm: CounterArm): Moments {
  const get = (part: string) => counters[counterName(step, arm, part)] ?? 0;
  if (guard.metric === 'failure_rate') return { n: get('n'), sum: get('f'), sumSq: get('f') };
  if (guard.metric === 'duration_ms') return { n: get('n'), sum: get('d.s'), sumSq: get('d.q') };
  const field = counterField(guard);
  return { n: get(`${field}.n`), sum: get(`${field}.s`), sumSq: get(`${field}.q`) };
}

/** Each step's moments of both arms for a guard, steps 0 … `steps` − 1. */
export function stepMomentsOf(counters: Counters, guard: Guard, steps: number): StepMoments[] {
  return Array.from({ length: Math.max(1, steps) }, (_, step) => ({
    base: armMoments(counters, guard, step, 'b'),
    candidate: armMoments(counters, guard, step, 'c'),
  }));
}

/** The candidate's executions at a step. */
export const candidateAt = (counters: Counters, step: number) => counters[counterName(step, 'c', 'n')] ?? 0;

/**
 * A rollout started before the moments were kept has its total counts only: the failure rate
 * as one step, nothing for another metric.
 */
export function legacyMoments(counts: {
  base: { executions: number; failed: number };
  candidate: { executions: number; failed: number };
}): StepMoments[] {
  const rate = (arm: { executions: number; failed: number }): Moments =>
    arm.executions === 0 ? NO_MOMENTS : { n: arm.executions, sum: arm.failed, sumSq: arm.failed };
  return [{ base: rate(counts.base), candidate: rate(counts.candidate) }];
}
