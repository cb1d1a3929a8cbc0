import { describe, expect, it } from 'vitest';
import { measureEffect } from '../../../../lambdas/core/rollouts/effect.ts';
import { normalCdf, percentile } from '../../../../lambdas/core/rollouts/statistics.ts';
import type { Execution } from '../../../../lambdas/core/schemas/records.ts';

describe('the normal distribution and percentiles (display figures)', () => {
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

  it('is improved, worse or no_significant_change by the anytime-valid interval and the sign of the difference', () => {
    const verdict = (baseFailed: number, appliedFailed: number) =>
      measureEffect({
        base: arm('b', 400, baseFailed),
        applied: arm('a', 400, appliedFailed),
        signals: [],
        slotIds: [],
        minExecutions: 200,
      }).verdict;
    expect(verdict(60, 20)).toBe('improved');
    expect(verdict(20, 60)).toBe('worse');
    // 6 % against 3.5 %: p < 0.05 for a fixed-horizon z-test looked at once, not shown by one looked at always.
    expect(verdict(14, 24)).toBe('no_significant_change');
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
