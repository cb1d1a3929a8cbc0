import { describe, expect, it } from 'vitest';
import { budgetStops, improved } from '../../../cli/optimize-command.ts';

/** When `optimize` stops: the budget's forecast, and a round that improved nothing. */

const summary = (fixed: string[], regressed: string[]) =>
  ({
    cases: 10,
    evaluated: 10,
    base: { passed: 5, failed: 5 },
    candidate: { passed: 5, failed: 5 },
    fixed,
    regressed,
    durationMsDelta: null,
    costUsdDelta: null,
    updatedAt: '2025-01-01T00:00:00.000Z',
  }) as Parameters<typeof improved>[0];

describe('optimize stops', () => {
  it('before a round whose forecast (the last round’s cost) would take the total past --budget-usd', () => {
    expect(budgetStops([], 0.1)).toBe(false);
    expect(budgetStops([{ costUsd: 0.04 }], 0.1)).toBe(false);
    expect(budgetStops([{ costUsd: 0.04 }, { costUsd: 0.04 }], 0.1)).toBe(true);
    expect(budgetStops([{ costUsd: 0.04 }, { costUsd: 0.04 }], undefined)).toBe(false);
    expect(budgetStops([{ costUsd: 0 }, { costUsd: 0 }], 0)).toBe(false);
  });

  it('when a round fixed no new case and removed no regression', () => {
    expect(improved(summary(['a'], []), summary(['a', 'b'], []))).toBe(true);
    expect(improved(summary(['a'], ['x']), summary(['a'], []))).toBe(true);
    expect(improved(summary(['a', 'b'], []), summary(['a'], ['x']))).toBe(false);
    expect(improved(summary(['a'], ['x']), summary(['a'], ['x']))).toBe(false);
  });
});
