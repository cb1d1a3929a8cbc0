/*
 * The confidence sequence against GrowthBook's published values (packages/stats/tests/frequentist/
 * test_tests.py, TestSequentialTTest: the relative effect of two arms, its interval at tuning 1,000
 * and 5,000), and its defining property: wider than a fixed-horizon interval, tightest near the tuning.
 */
import { describe, expect, it } from 'vitest';
import {
  oneSidedHalfWidth,
  sequentialHalfWidth,
  sequentialPValue,
  sequentialRho,
  stratifiedInterval,
  TUNING_EXECUTIONS,
} from '../../../../lambdas/core/rollouts/sequential.ts';

/** GrowthBook's relative effect of b over a, with its delta-method variance (the test's own arithmetic). */
function relative(
  a: { n: number; mean: number; variance: number },
  b: { n: number; mean: number; variance: number },
) {
  const estimate = b.mean / a.mean - 1;
  const variance = b.variance / (b.n * a.mean ** 2) + (b.mean ** 2 * a.variance) / (a.n * a.mean ** 4);
  return { estimate, s2: variance * (a.n + b.n), n: a.n + b.n };
}
const sampleMean = (sum: number, sumSq: number, n: number) => ({
  n,
  mean: sum / n,
  variance: (sumSq - (sum * sum) / n) / (n - 1),
});
const proportion = (sum: number, n: number) => ({ n, mean: sum / n, variance: (sum / n) * (1 - sum / n) });

describe('the asymptotic confidence sequence', () => {
  it("gives GrowthBook's interval for two sample means at tuning 1,000 (−0.55844, 1.56516)", () => {
    const effect = relative(sampleMean(1396.87, 52377.9767, 3000), sampleMean(2422.7, 134698.29, 3461));
    const half = sequentialHalfWidth(effect.s2, effect.n, 0.05, sequentialRho(0.05, 1000));
    expect(effect.estimate).toBeCloseTo(0.50336, 5);
    expect(effect.estimate - half).toBeCloseTo(-0.55844, 4);
    expect(effect.estimate + half).toBeCloseTo(1.56516, 4);
  });

  it("gives GrowthBook's interval for two proportions at its default tuning 5,000 (0.40098, 0.60675)", () => {
    const effect = relative(proportion(1396, 3000), proportion(2422, 3461));
    const half = sequentialHalfWidth(effect.s2, effect.n, 0.05, sequentialRho(0.05, 5000));
    expect(effect.estimate).toBeCloseTo(0.50386, 5);
    expect(effect.estimate - half).toBeCloseTo(0.40098, 4);
    expect(effect.estimate + half).toBeCloseTo(0.60675, 4);
    // GrowthBook's p-value there is 0.0 (to five places).
    expect(sequentialPValue(effect.estimate, effect.s2, effect.n, 0.05)).toBeLessThan(0.000005);
  });

  it('is wider than the fixed-horizon 95 % interval at every n, and tightest relative to it near the tuning', () => {
    const ratio = (n: number) => sequentialHalfWidth(1, n, 0.05) / (1.959964 * Math.sqrt(1 / n));
    for (const n of [100, 1_000, TUNING_EXECUTIONS, 50_000]) expect(ratio(n)).toBeGreaterThan(1);
    expect(ratio(TUNING_EXECUTIONS)).toBeLessThan(ratio(100));
    expect(ratio(TUNING_EXECUTIONS)).toBeLessThan(ratio(200_000));
  });

  it('answers p = 1 for no difference, and p below α exactly when the interval excludes 0', () => {
    expect(sequentialPValue(0, 1, 1000, 0.05)).toBe(1);
    for (const estimate of [0.05, 0.08, 0.1, 0.12, 0.2]) {
      const half = sequentialHalfWidth(1, 1000, 0.05);
      expect(sequentialPValue(estimate, 1, 1000, 0.05) < 0.05).toBe(estimate - half > 0);
    }
  });

  it('gives a one-sided bound between the two-sided half-widths at 2α and α, a hair above the first', () => {
    // The same mixing variance for all three (the one tuned at α).
    const rho = sequentialRho(0.05);
    for (const n of [60, 400, TUNING_EXECUTIONS, 10_000, 100_000]) {
      const oneSided = oneSidedHalfWidth(4, n, 0.05);
      expect(oneSided).toBeGreaterThan(sequentialHalfWidth(4, n, 0.1, rho));
      expect(oneSided).toBeLessThan(sequentialHalfWidth(4, n, 0.05, rho));
      expect(oneSided / sequentialHalfWidth(4, n, 0.1, rho)).toBeLessThan(1.01);
    }
    expect(oneSidedHalfWidth(0, 100, 0.05)).toBe(0);
  });

  it('keeps its one-sided error at or below α when read after every batch of 20 up to 10,000 (2,000 seeded walks)', () => {
    // A difference of 0 observed with standard deviation 1: how often does the bound "at least
    // estimate − w" ever pass above 0? Mulberry32, seeded, and Box–Muller.
    let state = 20_260_204;
    const uniform = () => {
      state = (state + 0x6d2b79f5) | 0;
      let t = Math.imul(state ^ (state >>> 15), 1 | state);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
    };
    const gaussian = () => Math.sqrt(-2 * Math.log(1 - uniform())) * Math.cos(2 * Math.PI * uniform());
    const walks = 2_000;
    const looks = Array.from({ length: 500 }, (_, i) => (i + 1) * 20);
    const oneSided = looks.map((n) => oneSidedHalfWidth(1, n, 0.05));
    const twoSided = looks.map((n) => sequentialHalfWidth(1, n, 0.05));
    let oneSidedErrors = 0;
    let twoSidedLowErrors = 0;
    for (let walk = 0; walk < walks; walk += 1) {
      let sum = 0;
      let oneSidedWrong = false;
      let twoSidedWrong = false;
      looks.forEach((n, look) => {
        // The sum of 20 more observations is normal with variance 20.
        sum += Math.sqrt(20) * gaussian();
        const estimate = sum / n;
        if (estimate - (oneSided[look] as number) > 0) oneSidedWrong = true;
        if (estimate - (twoSided[look] as number) > 0) twoSidedWrong = true;
      });
      if (oneSidedWrong) oneSidedErrors += 1;
      if (twoSidedWrong) twoSidedLowErrors += 1;
    }
    expect(oneSidedErrors / walks).toBeLessThanOrEqual(0.05);
    // Tighter than reading one end of the two-sided sequence, which errs on that side about half as often.
    expect(oneSidedErrors).toBeGreaterThan(twoSidedLowErrors);
  });

  it('weights strata: one stratum is the plain interval, two equal ones halve the variance', () => {
    const one = stratifiedInterval([{ difference: 0.1, variance: 0.01, n: 100, weight: 1 }], 0.05);
    expect(one?.estimate).toBeCloseTo(0.1, 12);
    const half = sequentialHalfWidth(0.01 * 100, 100, 0.05);
    expect(one?.interval[1]).toBeCloseTo(0.1 + half, 12);
    const two = stratifiedInterval(
      [
        { difference: 0.1, variance: 0.01, n: 100, weight: 5 },
        { difference: 0.3, variance: 0.01, n: 100, weight: 5 },
      ],
      0.05,
    );
    expect(two?.estimate).toBeCloseTo(0.2, 12);
    expect(two?.n).toBe(200);
    expect(stratifiedInterval([], 0.05)).toBeNull();
  });
});
