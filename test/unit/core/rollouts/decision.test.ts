/*
 * The judgement of a rollout from its metrics' moments: verdicts per metric, one decision for the
 * rollout (roll back on shown worse, step up or promote only on shown within threshold), steps
 * compared within themselves, and a seeded A/A simulation that stays within α.
 */
import { describe, expect, it } from 'vitest';
import { BENCH_OPTIONS, simulate, TUNED_WORLD } from '../../../../bench/guardrails-sim.ts';
import { decide, judgeMetric, metricAlpha } from '../../../../lambdas/core/rollouts/decision.ts';
import { guardOf, guardsOf } from '../../../../lambdas/core/rollouts/guards.ts';
import type { Moments } from '../../../../lambdas/core/rollouts/moments.ts';

const rate = (n: number, failed: number): Moments => ({ n, sum: failed, sumSq: failed });
/** n observations of mean `mean` and standard deviation `sd` (exact moments). */
const normal = (n: number, mean: number, sd: number): Moments => ({
  n,
  sum: n * mean,
  sumSq: sd * sd * (n - 1) + n * mean * mean,
});
const failure = guardOf({ metric: 'failure_rate' });
const duration = guardOf({ metric: 'duration_ms' });
const relevance = guardOf({
  metric: 'signal',
  kind: 'relevance',
  direction: 'higher_is_better',
  threshold: 0.05,
});
const at = (candidateAtStep: number, step = 0, steps = 1) => ({
  step,
  steps,
  candidateAtStep,
  minExecutions: 200,
});

describe('judging a metric', () => {
  it('calls a failure rate shown higher worse, naming both arms, the interval and the threshold', () => {
    const judged = judgeMetric(
      failure,
      [{ base: rate(2000, 20), candidate: rate(2000, 80) }],
      metricAlpha(1),
    );
    expect(judged.verdict).toBe('worse');
    expect(judged.difference).toBeCloseTo(0.03, 10);
    expect(judged.interval?.[0]).toBeGreaterThan(0);
    const decision = decide([judged], at(2000));
    expect(decision.action).toBe('roll_back');
    expect(decision.reason).toContain(
      'failure rate 4.00 % (80 of 2,000) on the candidate against 1.00 % (20 of 2,000)',
    );
    expect(decision.reason).toContain('threshold 1.00 points');
  });

  it('never calls "not significant" non-inferior: a wide interval is inconclusive and keeps collecting', () => {
    const judged = judgeMetric(failure, [{ base: rate(300, 30), candidate: rate(300, 36) }], metricAlpha(1));
    expect(judged.verdict).toBe('inconclusive');
    expect(decide([judged], at(300)).action).toBe('keep');
  });

  it("keeps the whole α for each metric's non-inferiority bound: a promotion needs every metric within at once", () => {
    // Three guards: "worse" and "better" share α (any one may decide), but a promotion needs each
    // one's own 95 % bound within its threshold, so a mean duration no different, 1,500 ms apart
    // from execution to execution, is shown within 100 ms at 4,700 an arm though its α/3 interval
    // still reaches past 100 ms.
    const arms = [{ base: normal(4700, 2500, 1500), candidate: normal(4700, 2500, 1500) }];
    const judged = judgeMetric(duration, arms, metricAlpha(3));
    expect(judged.interval?.[1]).toBeGreaterThan(100);
    expect(judged.worseBound).toBeLessThan(100);
    expect(judged.worseBound).toBeLessThan(judged.interval?.[1] ?? 0);
    expect(judged.verdict).toBe('non_inferior');
    // Held to the α/3 interval instead, the same figures would keep collecting.
    expect(judgeMetric(duration, arms, metricAlpha(3), metricAlpha(3)).verdict).toBe('inconclusive');
    expect(decide([judged], at(4700)).reason).toMatch(/at worst \+?\d+ ms at 95 %/);
  });

  it('calls a metric within its threshold non-inferior once its worse bound is below it, and promotes then', () => {
    const judged = judgeMetric(
      duration,
      [{ base: normal(4000, 1200, 300), candidate: normal(4000, 1205, 300) }],
      0.05,
    );
    expect(judged.verdict).toBe('non_inferior');
    expect(decide([judged], at(4000)).action).toBe('promote');
    // Not before the step holds minExecutions on the candidate, and it says what it waits for.
    const early = decide([judged], { ...at(150), minExecutions: 200 });
    expect(early.action).toBe('keep');
    expect(early.next).toContain('the candidate has 200 executions (150 so far)');
  });

  it('reads a higher-is-better signal the right way round: a lower score is worse', () => {
    const judged = judgeMetric(
      relevance,
      [{ base: normal(1000, 0.8, 0.2), candidate: normal(1000, 0.7, 0.2) }],
      0.05,
    );
    expect(judged.verdict).toBe('worse');
    expect(judged.difference).toBeCloseTo(-0.1, 10);
    const better = judgeMetric(
      relevance,
      [{ base: normal(1000, 0.7, 0.2), candidate: normal(1000, 0.8, 0.2) }],
      0.05,
    );
    expect(better.verdict).toBe('better');
  });

  it('has no verdict while an arm has fewer than 30 observations', () => {
    const judged = judgeMetric(failure, [{ base: rate(29, 29), candidate: rate(500, 0) }], 0.05);
    expect(judged.verdict).toBe('not_enough_data');
    expect(judged.interval).toBeNull();
  });

  it('moves up a step, not to promotion, before the last step', () => {
    const judged = judgeMetric(
      duration,
      [{ base: normal(4000, 1200, 300), candidate: normal(4000, 1200, 300) }],
      0.05,
    );
    const decision = decide([judged], at(4000, 0, 3));
    expect(decision.action).toBe('step_up');
    expect(decision.next).toBe('moves to step 2 of 3');
  });

  it('compares steps within themselves: a drift over time that hits both arms alike is no difference', () => {
    // Step 1 (5 %) while the pipeline fails 1 %, step 2 (50 %) once it fails 10 % for both arms.
    const steps = [
      { base: rate(19_000, 190), candidate: rate(1_000, 10) },
      { base: rate(10_000, 1_000), candidate: rate(10_000, 1_000) },
    ];
    const judged = judgeMetric(failure, steps, 0.05);
    expect(judged.difference).toBeCloseTo(0, 10);
    expect(judged.verdict).not.toBe('worse');
    // Pooled, the candidate would look 4 points worse (9.2 % against 4.1 %).
    expect(judged.applied.mean).toBeGreaterThan((judged.base.mean ?? 0) + 0.04);
  });

  it('guards the failure rate at its default threshold for a rollout started without guardrails', () => {
    expect(guardsOf({})).toEqual([
      { metric: 'failure_rate', kind: null, direction: 'lower_is_better', threshold: 0.01 },
    ]);
  });
});

describe('a seeded A/A simulation through the judge', () => {
  it('is shown better or worse at some look in at most 5 % of 1,000 rollouts (20 a batch, 5,000 an arm)', () => {
    const result = simulate(
      TUNED_WORLD,
      { metric: null, thresholds: 0 },
      { ...BENCH_OPTIONS, rollouts: 1_000, stopAtPromotion: false },
    );
    expect(result.everDecided / result.rollouts).toBeLessThanOrEqual(0.05);
  });
});
