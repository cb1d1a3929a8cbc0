import { describe, expect, it } from 'vitest';
import { RateLimitedError } from '../../../lambdas/core/errors.ts';
import {
  budgetExceeded,
  monthOf,
  monthResetsAt,
  settleModelSpend,
} from '../../../lambdas/core/model-budget.ts';

describe("a team's model budget month", () => {
  it('is the calendar month in UTC, and resets at the first instant of the next', () => {
    expect(monthOf(new Date('2026-11-30T23:59:59.999Z'))).toBe('2026-11');
    expect(monthResetsAt(new Date('2026-11-15T10:00:00.000Z')).toISOString()).toBe(
      '2026-12-01T00:00:00.000Z',
    );
    expect(monthResetsAt(new Date('2026-12-31T23:59:59.000Z')).toISOString()).toBe(
      '2027-01-01T00:00:00.000Z',
    );
  });
});

describe('a run refused for the budget', () => {
  it('is a 429 naming the estimate, the budget, the spend, the reset and what to do instead', () => {
    const error = budgetExceeded(25, 24.5, 0.75, new Date('2026-11-30T23:59:00.000Z'));
    expect(error).toBeInstanceOf(RateLimitedError);
    expect(error.statusCode).toBe(429);
    expect(error.message).toBe(
      "This run's estimated model cost of $0.75 would take your team past its model budget of $25.00 a month " +
        '($24.50 spent or reserved this month); the budget resets on 2026-12-01T00:00:00.000Z. Start the run ' +
        'with synthesisHandler "heuristic-v1" (no model cost), or ask a team admin to raise ' +
        'modelBudgetUsdPerMonth (PATCH /teams/{teamId}/settings).',
    );
    expect(error.retryAfterSeconds).toBe(60);
  });

  it('shows a cost under a cent to four places, and asks to wait at least a second', () => {
    const error = budgetExceeded(0, 0, 0.0042, new Date('2026-11-30T23:59:59.600Z'));
    expect(error.message).toContain('estimated model cost of $0.0042 would');
    expect(error.message).toContain('model budget of $0.00 a month ($0.00 spent');
    expect(error.retryAfterSeconds).toBe(1);
    expect(budgetExceeded(1, 0.01, 0.01, new Date('2026-11-30T23:59:58.500Z')).message).toContain(
      'cost of $0.01 would take your team past its model budget of $1.00 a month ($0.01 spent',
    );
    expect(budgetExceeded(1, 0, 1, new Date('2026-11-30T23:59:58.500Z')).retryAfterSeconds).toBe(2);
  });
});

describe("an ended run's model spend", () => {
  const adjusted = async (run: Parameters<typeof settleModelSpend>[1]) => {
    const calls: unknown[][] = [];
    await settleModelSpend({ adjust: async (...args) => void calls.push(args) }, run);
    return calls;
  };
  const run = { teamId: 'team-1', createdAt: '2026-10-31T23:00:00.000Z', estimatedCostUsd: null };
  const usage = (costUsd: number) => ({ model: 'm', inputTokens: 1, outputTokens: 1, attempts: 1, costUsd });

  it('replaces its estimate with its reported cost, in the month it started', async () => {
    expect(await adjusted({ ...run, estimatedCostUsd: 0.75, usage: usage(0.25) })).toEqual([
      ['team-1', '2026-10', -0.5],
    ]);
    expect(await adjusted({ ...run, usage: usage(0.25) })).toEqual([['team-1', '2026-10', 0.25]]);
    expect(await adjusted({ ...run, estimatedCostUsd: 0.5 })).toEqual([['team-1', '2026-10', -0.5]]);
  });

  it('changes nothing when it neither reserved nor spent', async () => {
    expect(await adjusted(run)).toEqual([]);
    expect(await adjusted({ ...run, estimatedCostUsd: 0, usage: usage(0) })).toEqual([]);
  });
});
