import { describe, expect, it } from 'vitest';
import { measureEffect } from '../../../../lambdas/core/rollouts/effect.ts';
import { compareProportions, normalCdf, percentile } from '../../../../lambdas/core/rollouts/statistics.ts';
import type { Execution } from '../../../../lambdas/core/schemas/records.ts';

describe('the two-proportion z-test and its interval', () => {
  // Known values: R's prop.test(c(200, 150), c(1000, 1000), correct = FALSE) gives
  // X-squared = 8.658 (z = -2.9424), p-value = 0.003256; the Wald interval of p2 - p1 is
  // -0.05 ± 1.96 × sqrt(0.2·0.8/1000 + 0.15·0.85/1000) = [-0.08323, -0.01677].
  it('matches R for 200/1000 against 150/1000', () => {
    const result = compareProportions({ n: 1000, k: 200 }, { n: 1000, k: 150 });
    expect(result.difference).toBeCloseTo(-0.05, 12);
    expect(result.z).toBeCloseTo(-2.94245, 4);
    expect(result.pValue).toBeCloseTo(0.003256, 5);
    expect(result.ci95[0]).toBeCloseTo(-0.083233, 5);
    expect(result.ci95[1]).toBeCloseTo(-0.016767, 5);
  });

  it('matches R for 10/200 against 24/200 (worse) and 10/100 against 12/100 (no difference)', () => {
    const worse = compareProportions({ n: 200, k: 10 }, { n: 200, k: 24 });
    expect(worse.pValue).toBeCloseTo(0.012072, 5);
    expect(worse.ci95[0]).toBeCloseTo(0.015772, 5);
    expect(worse.ci95[1]).toBeCloseTo(0.124228, 5);
    const same = compareProportions({ n: 100, k: 10 }, { n: 100, k: 12 });
    expect(same.pValue).toBeCloseTo(0.65128, 4);
  });

  it('says p = 1 when neither arm ever failed (no variance), not NaN', () => {
    const result = compareProportions({ n: 50, k: 0 }, { n: 50, k: 0 });
    expect(result).toMatchObject({ difference: 0, pValue: 1, ci95: [0, 0], z: 0 });
    expect(compareProportions({ n: 20, k: 20 }, { n: 10, k: 10 })).toMatchObject({ pValue: 1, z: 0 });
  });

  it('has a normal CDF accurate to 1e-6 at known points', () => {
    expect(normalCdf(0)).toBeCloseTo(0.5, 7);
    expect(normalCdf(1.959963984540054)).toBeCloseTo(0.975, 6);
    expect(normalCdf(-1)).toBeCloseTo(0.158655, 6);
  });

  it('takes nearest-rank percentiles', () => {
    expect(percentile([], 50)).toBeNull();
    expect(percentile([5, 1, 3, 2, 4], 50)).toBe(3);
    expect(percentile([40, 10, 30, 20], 50)).toBe(20);
    // By value, not as text (where 100 < 20 < 9).
    expect(percentile([9, 100, 20], 95)).toBe(100);
    expect(percentile([9, 100, 20], 1)).toBe(9);
    expect(
      percentile(
        Array.from({ length: 100 }, (_, i) => i + 1),
        95,
      ),
    ).toBe(95);
  });
});

const execution = (id: string, configurationId: string, failed: boolean): Execution => ({
  id,
  pipelineId: 'p',
  configurationId,
  status: failed ? 'failed' : 'succeeded',
  durationMs: 10,
  startedAt: '2026-01-01T00:00:00.000Z',
});

describe('the verdict', () => {
  const arm = (prefix: string, n: number, failed: number) =>
    Array.from({ length: n }, (_, i) => execution(`${prefix}${i}`, prefix, i < failed));

  it('is not_enough_data while an arm is under the minimum, whatever the rates', () => {
    const figures = measureEffect({
      base: arm('b', 29, 29),
      applied: arm('a', 100, 0),
      signals: [],
      slotIds: [],
      minExecutions: 30,
    });
    expect(figures.verdict).toBe('not_enough_data');
  });

  it('is improved, worse or no_significant_change by p < 0.05 and the sign of the difference', () => {
    const verdict = (baseFailed: number, appliedFailed: number) =>
      measureEffect({
        base: arm('b', 200, baseFailed),
        applied: arm('a', 200, appliedFailed),
        signals: [],
        slotIds: [],
        minExecutions: 200,
      }).verdict;
    expect(verdict(24, 10)).toBe('improved');
    expect(verdict(10, 24)).toBe('worse');
    expect(verdict(10, 12)).toBe('no_significant_change');
  });

  it("counts an arm's signals by severity: those citing one of its executions", () => {
    const figures = measureEffect({
      base: arm('b', 2, 1),
      applied: arm('a', 2, 0),
      signals: [
        {
          id: 's1',
          pipelineId: 'p',
          kind: 'x',
          severity: 'critical',
          message: 'm',
          executionId: 'b0',
          occurredAt: '2026-01-01T00:00:00.000Z',
        },
        {
          id: 's2',
          pipelineId: 'p',
          kind: 'x',
          severity: 'info',
          message: 'm',
          executionId: 'a1',
          occurredAt: '2026-01-01T00:00:00.000Z',
        },
        {
          id: 's3',
          pipelineId: 'p',
          kind: 'x',
          severity: 'warning',
          message: 'm',
          occurredAt: '2026-01-01T00:00:00.000Z',
        },
      ],
      slotIds: [],
      minExecutions: 30,
    });
    expect(figures.arms.base.signals).toEqual({ info: 0, warning: 0, critical: 1 });
    expect(figures.arms.applied.signals).toEqual({ info: 1, warning: 0, critical: 0 });
  });
});
