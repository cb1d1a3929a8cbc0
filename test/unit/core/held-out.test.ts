/* The held-out part of an evaluation set keeps failed and succeeded cases in proportion. */
import { describe, expect, it } from 'vitest';
import type { EvaluationCaseRef } from '../../../lambdas/core/evaluation.ts';
import { holdOut } from '../../../lambdas/core/held-out.ts';

const refs = (reason: EvaluationCaseRef['reason'], count: number, prefix = reason) =>
  Array.from({ length: count }, (_, i) => ({
    executionId: `${prefix}-${i}`,
    reason,
    startedAt: '2026-01-01T00:00:00.000Z',
  }));

describe('the held-out cases', () => {
  it('are failed and succeeded in the proportion of the cases no finding cited', () => {
    for (const root of ['root-a', 'root-b', 'root-c']) {
      const set = holdOut([...refs('cited', 10), ...refs('failed', 30), ...refs('succeeded', 60)], root);
      const held = set.filter((ref) => ref.heldOut);
      const byReason = (reason: string) => held.filter((ref) => ref.reason === reason).length;
      expect([root, byReason('cited'), byReason('failed'), byReason('succeeded')]).toEqual([root, 0, 7, 13]);
    }
  });

  it('are none when every case was cited, or the set is too small', () => {
    expect(holdOut(refs('cited', 10), 'root-a').some((ref) => ref.heldOut)).toBe(false);
    expect(holdOut(refs('failed', 4), 'root-a').some((ref) => ref.heldOut)).toBe(false);
  });
});
