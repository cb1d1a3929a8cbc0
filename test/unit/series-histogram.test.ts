import { describe, expect, it } from 'vitest';
import { durationBin, histogramQuantile } from '../../lambdas/core/series.ts';
import { percentile } from '../../lambdas/synthesis/evidence/executions.ts';

describe('series histogram', () => {
  it('gives p50/p95/p99 within 2 % of the nearest-rank value', () => {
    const values = Array.from({ length: 5000 }, (_, i) => 1 + ((i * 7919) % 20000));
    const bins = new Map<string, number>();
    for (const v of values) bins.set(durationBin(v), (bins.get(durationBin(v)) ?? 0) + 1);
    for (const q of [0.5, 0.95, 0.99]) {
      const exact = percentile(values, q) as number;
      const estimate = histogramQuantile(bins, q) as number;
      expect(Math.abs(estimate - exact) / exact).toBeLessThanOrEqual(0.02);
    }
  });
});
