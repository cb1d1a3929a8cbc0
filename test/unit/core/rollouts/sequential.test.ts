/*
 * The confidence sequence against GrowthBook's published values (packages/stats/tests/frequentist/
 * test_tests.py, TestSequentialTTest: the relative effect of two arms, its interval at tuning 1,000
 * and 5,000), and its defining property: wider than a fixed-horizon interval, tightest near the tuning.
 */
import { describe, expect, it } from 'vitest';
import {
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
