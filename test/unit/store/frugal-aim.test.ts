/**
 * How far a frugal merged read aims (store/merge-aim.ts frugalAim): at most as many of the missing
 * items as a round finds more than are missing in 2 % of rounds, were the records strewn at random
 * in time (docs/scaling.md, "Frugal merged reads").
 */
import { describe, expect, it } from 'vitest';
import { poissonAbove as above, frugalAim } from '../../../lambdas/store/merge-aim.ts';

describe('a frugal round aims', () => {
  it('short of the last few items, so that it rarely reads one past the answer', () => {
    // The tail it is held to, against closed forms: P(X > 0) = 1 − e^−m, P(X > 1) = 1 − (1 + m)e^−m.
    expect(above(2, 0)).toBeCloseTo(1 - Math.exp(-2), 12);
    expect(above(1, 1)).toBeCloseTo(1 - 2 / Math.E, 12);
    expect(above(800, 1000)).toBeLessThan(1e-9);
    expect(frugalAim(1)).toBeCloseTo(0.215, 2);
    expect(frugalAim(2)).toBeCloseTo(0.6, 1);
    expect(frugalAim(5)).toBeCloseTo(2.09, 1);
    for (const missing of [1, 2, 3, 5, 10, 20, 50, 200, 1000]) {
      expect(above(frugalAim(missing), missing)).toBeLessThanOrEqual(0.02 + 1e-9);
      // Not needlessly short: a little further would pass the 2 %.
      if (frugalAim(missing) < 0.8 * missing)
        expect(above(frugalAim(missing) * 1.05, missing)).toBeGreaterThan(0.02);
    }
  });

  it('at most 80 % of many missing items, and further the more are missing', () => {
    let previous = 0;
    for (const missing of [1, 2, 5, 10, 50, 51, 100, 200, 1000]) {
      const aim = frugalAim(missing);
      expect(aim).toBeGreaterThan(previous);
      expect(aim).toBeLessThanOrEqual(0.8 * missing);
      previous = aim;
    }
    expect(frugalAim(1000)).toBe(800);
  });
});
