/*
 * The effect's figures (core/rollouts/effect.ts): each arm's counts, durations, signals and time
 * span, the touched slots, the verdict once both arms have enough executions, a rollout's exact
 * counts in place of the sample's, and the words a guardrail ends a rollout with.
 */
import { describe, expect, it } from 'vitest';
import {
  type EffectFigures,
  measureEffect,
  withExactCounts,
} from '../../../../lambdas/core/rollouts/effect.ts';
import type { Execution } from '../../../../lambdas/core/schemas/records.ts';

type Measured = Pick<Execution, 'id' | 'status' | 'durationMs' | 'startedAt' | 'slotResults'>;

const run = (
  id: string,
  fields: {
    failed?: boolean;
    durationMs?: number;
    startedAt?: string;
    slotResults?: Measured['slotResults'];
  } = {},
): Measured => ({
  id,
  status: fields.failed ? 'failed' : 'succeeded',
  durationMs: fields.durationMs ?? 100,
  startedAt: fields.startedAt ?? '2026-01-01T00:00:00.000Z',
  ...(fields.slotResults ? { slotResults: fields.slotResults } : {}),
});
/** `n` executions of which the first `failed` failed. */
const arm = (prefix: string, n: number, failed: number) =>
  Array.from({ length: n }, (_, i) => run(`${prefix}${i}`, { failed: i < failed }));
const measure = (base: Measured[], applied: Measured[], minExecutions = 30) =>
  measureEffect({ base, applied, signals: [], slotIds: [], minExecutions });

describe("an arm's figures", () => {
  it('count its executions, failures, durations, the signals citing them and its time span', () => {
    const base = [
      run('b1', { durationMs: 300, startedAt: '2026-01-02T00:00:00.000Z' }),
      run('b2', { failed: true, durationMs: 100, startedAt: '2026-01-01T00:00:00.000Z' }),
      run('b3', { durationMs: 200, startedAt: '2026-01-03T00:00:00.000Z' }),
      run('b4', { durationMs: 400, startedAt: '2026-01-01T12:00:00.000Z' }),
    ];
    const signals = [
      { executionId: 'b1', severity: 'warning' as const },
      { executionId: 'b2', severity: 'critical' as const },
      { executionId: 'b2', severity: 'critical' as const },
      { executionId: 'a1', severity: 'info' as const },
      { executionId: 'elsewhere', severity: 'critical' as const },
      { severity: 'critical' as const } as { executionId: string; severity: 'critical' },
    ];
    const figures = measureEffect({ base, applied: [run('a1')], signals, slotIds: [], minExecutions: 1 });
    expect(figures.arms.base).toEqual({
      executions: 4,
      failed: 1,
      failureRate: 0.25,
      durationMs: { p50: 200, p95: 400 },
      signals: { info: 0, warning: 1, critical: 2 },
      from: '2026-01-01T00:00:00.000Z',
      to: '2026-01-03T00:00:00.000Z',
    });
    expect(figures.arms.applied.signals).toEqual({ info: 1, warning: 0, critical: 0 });
  });

  it('are empty, not zero, for an arm without executions, and give no verdict', () => {
    const figures = measure([], arm('a', 40, 0));
    expect(figures.arms.base).toEqual({
      executions: 0,
      failed: 0,
      failureRate: null,
      durationMs: null,
      signals: { info: 0, warning: 0, critical: 0 },
      from: null,
      to: null,
    });
    expect(figures.failureRate).toBeNull();
    expect(figures.verdict).toBe('not_enough_data');
    expect(measure(arm('b', 40, 0), []).failureRate).toBeNull();
  });
});

describe("a touched slot's figures", () => {
  it("count each arm's results of that slot alone", () => {
    const results = (status: 'failed' | 'succeeded', durationMs: number) => [
      { slotId: 'answer', status, durationMs },
      { slotId: 'other', status: 'failed' as const, durationMs: 1 },
    ];
    const base = [
      run('b1', { slotResults: results('failed', 50) }),
      run('b2', { slotResults: results('succeeded', 70) }),
      run('b3'),
    ];
    const figures = measureEffect({ base, applied: [], signals: [], slotIds: ['answer'], minExecutions: 1 });
    expect(figures.slots).toEqual([
      {
        slotId: 'answer',
        base: { executions: 2, failed: 1, failureRate: 0.5, durationMs: { p50: 50, p95: 70 } },
        applied: { executions: 0, failed: 0, failureRate: null, durationMs: null },
      },
    ]);
  });
});

describe('the verdict', () => {
  it('waits until both arms have the minimum of executions', () => {
    expect(measure(arm('b', 29, 15), arm('a', 40, 0)).verdict).toBe('not_enough_data');
    expect(measure(arm('b', 40, 20), arm('a', 29, 0)).verdict).toBe('not_enough_data');
    expect(measure(arm('b', 30, 24), arm('a', 30, 0)).verdict).toBe('improved');
  });

  it('is improved or worse when the anytime-valid p < 0.05, with the difference and its interval', () => {
    const improved = measure(arm('b', 100, 40), arm('a', 100, 10));
    expect(improved.verdict).toBe('improved');
    expect(improved.failureRate?.difference).toBeCloseTo(-0.3, 10);
    expect(improved.failureRate?.pValue).toBeLessThan(0.05);
    const [low, high] = improved.failureRate?.ci95 ?? [0, 0];
    expect(low).toBeLessThan(-0.3);
    expect(high).toBeGreaterThan(-0.3);
    expect(measure(arm('b', 100, 10), arm('a', 100, 40)).verdict).toBe('worse');
    // 30 % against 10 %: a fixed-horizon z-test looked at once says worse; an always-valid one, not yet.
    expect(measure(arm('b', 100, 10), arm('a', 100, 30)).verdict).toBe('no_significant_change');
  });

  it('is no significant change when p ≥ 0.05', () => {
    const figures = measure(arm('b', 100, 10), arm('a', 100, 12));
    expect(figures.verdict).toBe('no_significant_change');
    expect(figures.failureRate?.pValue).toBeGreaterThanOrEqual(0.05);
    expect(measure(arm('b', 50, 0), arm('a', 50, 0)).verdict).toBe('no_significant_change');
  });
});

describe("a rollout's exact counts", () => {
  const sample = () => measure(arm('b', 40, 4), arm('a', 40, 4));

  it('replace the sample’s executions and failures, and the verdict follows them', () => {
    const figures = sample();
    const exact = withExactCounts(
      figures,
      { base: { executions: 5000, failed: 500 }, candidate: { executions: 4000, failed: 100 } },
      30,
    );
    expect(exact.arms.base).toMatchObject({ executions: 5000, failed: 500, failureRate: 0.1 });
    expect(exact.arms.applied).toMatchObject({ executions: 4000, failed: 100, failureRate: 0.025 });
    expect(exact.arms.base.durationMs).toEqual(figures.arms.base.durationMs);
    expect(exact.verdict).toBe('improved');
    expect(exact.failureRate?.difference).toBeCloseTo(-0.075, 10);
  });

  it('equal to the sample are taken; fewer than the sample leave the figures as they are', () => {
    const figures = sample();
    const equal = withExactCounts(
      figures,
      { base: { executions: 40, failed: 30 }, candidate: { executions: 40, failed: 4 } },
      30,
    );
    expect(equal.arms.base.failed).toBe(30);
    expect(equal.verdict).toBe('improved');
    const short = { executions: 39, failed: 0 };
    const enough = { executions: 40, failed: 0 };
    expect(withExactCounts(figures, { base: short, candidate: enough }, 30)).toBe(figures);
    expect(withExactCounts(figures, { base: enough, candidate: short }, 30)).toBe(figures);
  });

  it('of an arm with no executions give no rate', () => {
    const empty = measure([], []);
    const none = { executions: 0, failed: 0 };
    const exact = withExactCounts(empty, { base: none, candidate: none }, 30);
    expect(exact.arms.base.failureRate).toBeNull();
    expect(exact.failureRate).toBeNull();
  });
});
