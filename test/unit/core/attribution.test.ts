import { describe, expect, it } from 'vitest';
import { summarizeEvaluation } from '../../../lambdas/core/evaluation.ts';
import { HELD_OUT_EVERY, holdOut } from '../../../lambdas/core/held-out.ts';
import type { StoredEvaluationResult } from '../../../lambdas/core/schemas/evaluation.ts';

/** Per-change attribution, the recommendation in words, and the held-out part of a set. */

const AT = '2025-06-01T10:00:00.000Z';
const result = (executionId: string, arm: string, passed: boolean, detail?: string): StoredEvaluationResult =>
  ({ executionId, arm, passed, recordedAt: AT, ...(detail ? { detail } : {}) }) as StoredEvaluationResult;

// 10 cases: c0-c3 fail on the base; change 1 fixes them alone, change 2 breaks c8 and c9 alone.
const ids = Array.from({ length: 10 }, (_, index) => `c${index}`);
const results = ids.flatMap((id, index) => {
  const failsOnBase = index < 4;
  const brokenBy2 = index >= 8;
  return [
    result(id, 'base', !failsOnBase),
    result(id, 'change:1', true),
    result(
      id,
      'change:2',
      failsOnBase ? false : !brokenBy2,
      brokenBy2 ? 'answer cut short\nat 200 tokens' : undefined,
    ),
    result(id, 'candidate', !brokenBy2),
  ];
});

describe('per-change attribution', () => {
  it('names the change that breaks cases, with the runner’s words, and says which to approve', () => {
    const summary = summarizeEvaluation(ids, results, AT, {
      changeIds: ['1', '2'],
      heldOut: new Set(['c0', 'c9']),
    });
    const [one, two] = summary.changes ?? [];
    expect(one).toMatchObject({
      changeId: '1',
      fixed: ['c0', 'c1', 'c2', 'c3'],
      fixedCount: 4,
      brokenCount: 0,
    });
    expect(two).toMatchObject({ changeId: '2', broken: ['c8', 'c9'], brokenCount: 2, fixedCount: 0 });
    expect(summary.recommendation?.changeIds).toEqual(['1']);
    expect(summary.recommendation?.text).toContain('Approve 1: 4 fixed, 0 broken');
    expect(summary.recommendation?.text).toContain('Leave out 2: it breaks 2 cases ("answer cut short")');
  });

  it('reports the held-out cases’ figures apart from the set’s', () => {
    const summary = summarizeEvaluation(ids, results, AT, {
      changeIds: ['1', '2'],
      heldOut: new Set(['c0', 'c5', 'c9']),
    });
    expect(summary.fixed).toEqual(['c0', 'c1', 'c2', 'c3']);
    expect(summary.heldOut).toEqual({
      cases: 3,
      evaluated: 3,
      baseFailed: 1,
      fixed: ['c0'],
      regressed: ['c9'],
      stillFailing: [],
    });
  });
});

describe('the held-out part of a set', () => {
  const refs = Array.from({ length: 50 }, (_, index) => ({
    executionId: `e${index}`,
    reason: (index < 10 ? 'cited' : index % 2 === 0 ? 'failed' : 'succeeded') as
      | 'cited'
      | 'failed'
      | 'succeeded',
    startedAt: AT,
  }));

  it('holds out one case in five, never a cited one, the same cases for the same chain', () => {
    const first = holdOut(refs, 'root-a');
    const held = first.filter((ref) => ref.heldOut).map((ref) => ref.executionId);
    expect(held).toHaveLength(50 / HELD_OUT_EVERY);
    expect(held.some((id) => Number(id.slice(1)) < 10)).toBe(false);
    expect(
      holdOut(refs, 'root-a')
        .filter((ref) => ref.heldOut)
        .map((ref) => ref.executionId),
    ).toEqual(held);
    expect(
      holdOut(refs, 'root-b')
        .filter((ref) => ref.heldOut)
        .map((ref) => ref.executionId),
    ).not.toEqual(held);
  });
});
