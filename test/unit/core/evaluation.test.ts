import { describe, expect, it } from 'vitest';
import {
  chooseEvaluationCases,
  type ExecutionStub,
  spreadPick,
  summarizeEvaluation,
} from '../../../lambdas/core/evaluation.ts';
import type { StoredEvaluationResult } from '../../../lambdas/core/schemas/evaluation.ts';

const at = (minute: number) => new Date(Date.UTC(2026, 0, 1, 0, minute)).toISOString();
const stub = (id: string, status: ExecutionStub['status'], minute: number): ExecutionStub => ({
  id,
  status,
  startedAt: at(minute),
});

describe('choosing the evaluation set', () => {
  it('takes every cited execution, then at most 50 failed and 50 succeeded others spread over the whole history', () => {
    const sample = Array.from({ length: 1000 }, (_, i) =>
      stub(`e${i}`, i % 2 === 0 ? 'failed' : 'succeeded', i),
    );
    const cited = [stub('e998', 'failed', 998), stub('c1', 'succeeded', 5)];

    const cases = chooseEvaluationCases(cited, sample);

    expect(cases.slice(0, 2).map((c) => [c.executionId, c.reason])).toEqual([
      ['e998', 'cited'],
      ['c1', 'cited'],
    ]);
    const failed = cases.filter((c) => c.reason === 'failed');
    const succeeded = cases.filter((c) => c.reason === 'succeeded');
    expect(failed).toHaveLength(50);
    expect(succeeded).toHaveLength(50);
    expect(failed.map((c) => c.executionId)).not.toContain('e998');
    // Spread, not the newest 50: the oldest and the newest failures are both in.
    expect(failed[0]?.executionId).toBe('e0');
    expect(failed.at(-1)?.executionId).toBe('e996');
    expect(new Set(cases.map((c) => c.executionId)).size).toBe(cases.length);
  });

  it('takes all when there are fewer than the limits', () => {
    expect(chooseEvaluationCases([], [stub('a', 'failed', 1), stub('b', 'succeeded', 2)])).toHaveLength(2);
    expect(spreadPick([1, 2, 3], 1)).toEqual([2]);
    expect(spreadPick([1, 2, 3], 0)).toEqual([]);
  });
});

const result = (
  executionId: string,
  arm: 'base' | 'candidate',
  passed: boolean,
  extra: Partial<StoredEvaluationResult> = {},
): StoredEvaluationResult => ({ executionId, arm, passed, recordedAt: at(0), ...extra });

describe('summarizing results', () => {
  it('counts cases with both arms, names fixed and regressed, and averages deltas over cases reporting both', () => {
    const summary = summarizeEvaluation(
      ['a', 'b', 'c', 'd'],
      [
        result('a', 'base', false, { durationMs: 100, costUsd: 1 }),
        result('a', 'candidate', true, { durationMs: 50, costUsd: 0.5 }),
        result('b', 'base', true, { durationMs: 100 }),
        result('b', 'candidate', false, { durationMs: 200 }),
        result('c', 'base', true),
        result('c', 'candidate', true),
        result('d', 'base', true),
        result('x', 'base', true),
      ],
      at(9),
    );
    expect(summary).toEqual({
      cases: 4,
      evaluated: 3,
      base: { passed: 2, failed: 1 },
      candidate: { passed: 2, failed: 1 },
      fixed: ['a'],
      regressed: ['b'],
      durationMsDelta: 25,
      costUsdDelta: -0.5,
      changes: [],
      heldOut: null,
      recommendation: null,
      updatedAt: at(9),
    });
  });

  it('has null deltas when no case reports a figure on both arms', () => {
    const summary = summarizeEvaluation(
      ['a'],
      [result('a', 'base', true, { durationMs: 3 }), result('a', 'candidate', true)],
      at(1),
    );
    expect(summary.durationMsDelta).toBeNull();
    expect(summary.costUsdDelta).toBeNull();
  });
});

describe('the evaluation set at its edges', () => {
  it('picks nothing for no room, and reads each sampled execution once, oldest first', () => {
    expect(spreadPick(['a', 'b'], -1)).toEqual([]);
    const sample = [
      stub('c', 'failed', 3),
      stub('b', 'failed', 1),
      stub('a', 'failed', 1),
      stub('c', 'failed', 3),
    ];
    expect(chooseEvaluationCases([], sample).map((ref) => ref.executionId)).toEqual(['a', 'b', 'c']);
    const many = Array.from({ length: 120 }, (_, i) =>
      stub(`e${String(i).padStart(3, '0')}`, 'succeeded', 119 - i),
    );
    const picked = chooseEvaluationCases([], many).map((ref) => ref.startedAt);
    expect(picked[0]).toBe(at(0));
    expect(picked.at(-1)).toBe(at(119));
    expect([...picked].sort()).toEqual(picked);
  });

  it('averages a delta over the cases reporting it on both arms alone', () => {
    const summary = summarizeEvaluation(
      ['a', 'b', 'c'],
      [
        result('a', 'base', true, { durationMs: 100 }),
        result('a', 'candidate', true, { durationMs: 130 }),
        result('b', 'base', true, { durationMs: 100 }),
        result('b', 'candidate', true),
        result('c', 'base', true),
        result('c', 'candidate', true, { durationMs: 500 }),
      ],
      at(1),
    );
    expect(summary.durationMsDelta).toBe(30);
  });

  it('recommends nothing before any case was evaluated on both arms', () => {
    const summary = summarizeEvaluation(['a'], [result('a', 'base', true)], at(1), { changeIds: ['1'] });
    expect(summary.recommendation).toBeNull();
  });
});
