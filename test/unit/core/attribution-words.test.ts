/*
 * Per-change attribution at its edges (core/attribution.ts): what each change did alone, the
 * held-out figures, and the recommendation's words with and without per-change arms.
 */
import { describe, expect, it } from 'vitest';
import {
  changeOutcomes,
  heldOutFigures,
  listWords,
  OUTCOME_IDS,
  recommend,
} from '../../../lambdas/core/attribution.ts';
import type { ResultsByCase } from '../../../lambdas/core/evaluation.ts';
import type { ChangeOutcome, StoredEvaluationResult } from '../../../lambdas/core/schemas/evaluation.ts';

/** Cases by id, each arm passed (true) or failed (false). */
const arms = (cases: Record<string, Record<string, boolean>>): ResultsByCase =>
  new Map(
    Object.entries(cases).map(([id, byArm]) => [
      id,
      new Map(
        Object.entries(byArm).map(([arm, passed]) => [
          arm,
          { executionId: id, arm, passed } as StoredEvaluationResult,
        ]),
      ),
    ]),
  );
const outcome = (changeId: string, fixedCount: number, brokenCount: number): ChangeOutcome => ({
  changeId,
  evaluated: 10,
  fixed: Array.from({ length: fixedCount }, (_, i) => `${changeId}-f${i}`),
  fixedCount,
  broken: Array.from({ length: brokenCount }, (_, i) => `${changeId}-b${i}`),
  brokenCount,
});

describe('what each change did alone', () => {
  it('counts the cases with a result on the base and its arm, fixed and broken', () => {
    const results = arms({
      a: { base: false, 'change:1': true },
      b: { base: true, 'change:1': false },
      c: { base: true, 'change:1': true },
      d: { base: true },
      e: { 'change:1': true },
    });
    expect(changeOutcomes(['a', 'b', 'c', 'd', 'e', 'missing'], results, ['1', '2'])).toEqual([
      { changeId: '1', evaluated: 3, fixed: ['a'], fixedCount: 1, broken: ['b'], brokenCount: 1 },
    ]);
  });

  it('lists at most OUTCOME_IDS ids, counting them all', () => {
    const many = Object.fromEntries(
      Array.from({ length: OUTCOME_IDS + 2 }, (_, i) => [
        `x${i}`,
        { base: i % 2 === 0, 'change:1': i % 2 === 1 },
      ]),
    );
    const ids = Object.keys(many);
    const [only] = changeOutcomes(ids, arms(many), ['1']);
    expect(only?.fixed).toHaveLength(OUTCOME_IDS / 2 + 1);
    const more = Object.fromEntries(ids.map((id) => [id, { base: false, 'change:1': true }]));
    const [all] = changeOutcomes(ids, arms(more), ['1']);
    expect(all?.fixed).toEqual(ids.slice(0, OUTCOME_IDS));
    expect(all?.fixedCount).toBe(OUTCOME_IDS + 2);
    const broke = Object.fromEntries(ids.map((id) => [id, { base: true, 'change:1': false }]));
    const [broken] = changeOutcomes(ids, arms(broke), ['1']);
    expect(broken?.broken).toEqual(ids.slice(0, OUTCOME_IDS));
    expect(broken?.brokenCount).toBe(OUTCOME_IDS + 2);
  });
});

describe('the held-out figures', () => {
  it('count only held-out cases, and those with both arms as evaluated', () => {
    const results = arms({
      fixed: { base: false, candidate: true },
      regressed: { base: true, candidate: false },
      still: { base: false, candidate: false },
      fine: { base: true, candidate: true },
      half: { base: false },
      other: { candidate: true },
      open: { base: false, candidate: true },
    });
    const all = ['fixed', 'regressed', 'still', 'fine', 'half', 'other', 'open', 'gone'];
    const heldOut = new Set(all.filter((id) => id !== 'open'));
    expect(heldOutFigures(all, results, heldOut)).toEqual({
      cases: 7,
      evaluated: 4,
      baseFailed: 2,
      fixed: ['fixed'],
      regressed: ['regressed'],
      stillFailing: ['still'],
    });
  });
});

describe('the recommendation', () => {
  it('lists ids as a reader would', () => {
    expect(listWords([])).toBe('');
    expect(listWords(['1'])).toBe('1');
    expect(listWords(['1', '3'])).toBe('1 and 3');
    expect(listWords(['1', '2', '3'])).toBe('1, 2 and 3');
  });

  it('approves nothing when the proposal makes no change', () => {
    expect(recommend({ changeIds: [], fixed: ['a'], regressed: [], outcomes: [outcome('1', 1, 0)] })).toEqual(
      {
        changeIds: [],
        text: 'Nothing to approve: the proposal makes no change.',
      },
    );
  });

  it('without per-change arms: every change when nothing regressed, else none until replayed alone', () => {
    const base = { outcomes: [] as ChangeOutcome[] };
    expect(recommend({ ...base, changeIds: ['1'], fixed: ['a', 'b'], regressed: [] })).toEqual({
      changeIds: ['1'],
      text: 'Approve change 1: 2 fixed, 0 broken.',
    });
    expect(recommend({ ...base, changeIds: ['1', '2'], fixed: ['a'], regressed: [] })).toEqual({
      changeIds: ['1', '2'],
      text: 'Approve all 2 changes: 1 fixed, 0 broken.',
    });
    expect(recommend({ ...base, changeIds: ['1', '2'], fixed: [], regressed: [] })).toEqual({
      changeIds: [],
      text: 'Nothing to approve yet: the proposal fixed no case.',
    });
    expect(recommend({ ...base, changeIds: ['1'], fixed: ['a'], regressed: ['b'] })).toEqual({
      changeIds: [],
      text: 'Approve none yet: the proposal breaks 1 case and fixes 1.',
    });
    expect(recommend({ ...base, changeIds: ['1', '2'], fixed: [], regressed: ['b', 'c'] })).toEqual({
      changeIds: [],
      text: 'Approve none yet: the proposal breaks 2 cases and fixes 0; replay each change alone (evaluate --per-change) to see which change breaks them.',
    });
  });

  it('with per-change arms: all when every change fixed a case alone and broke none', () => {
    expect(
      recommend({ changeIds: ['1'], fixed: ['a'], regressed: [], outcomes: [outcome('1', 1, 0)] }),
    ).toEqual({ changeIds: ['1'], text: 'Approve change 1: 1 fixed, 0 broken.' });
    expect(
      recommend({
        changeIds: ['1', '2'],
        fixed: ['a', 'b', 'c'],
        regressed: ['d'],
        outcomes: [outcome('1', 1, 0), outcome('2', 2, 0)],
      }),
    ).toEqual({ changeIds: ['1', '2'], text: 'Approve all 2 changes: 3 fixed, 1 broken.' });
  });

  it('with per-change arms: the good ones, and why each other one is left out', () => {
    const overlapping = { ...outcome('1', 3, 0), fixed: ['a', 'b', 'c'] };
    const alsoFixing = { ...outcome('4', 2, 0), fixed: ['b', 'd'] };
    const recommendation = recommend({
      changeIds: ['1', '2', '3', '4', '5'],
      fixed: ['a', 'b', 'c', 'd'],
      regressed: ['x'],
      outcomes: [overlapping, outcome('2', 1, 2), outcome('3', 0, 0), alsoFixing],
      brokenDetail: (id) => (id === '2' ? `${'answer cut short '.repeat(10)}\nsecond line` : undefined),
    });
    expect(recommendation.changeIds).toEqual(['1', '4']);
    expect(recommendation.text).toBe(
      'Approve 1 and 4: 4 fixed, 0 broken, each replayed alone on the base. ' +
        `Leave out 2: it breaks 2 cases ("${'answer cut short '.repeat(10).slice(0, 80)}") and fixes 1. ` +
        "3 changed no case's result. 5 was not replayed alone.",
    );
  });

  it('counts the most a good change fixed when the listed ids fall short of the counts', () => {
    const listedFew = { ...outcome('1', 70, 0), fixed: ['a'] };
    const recommendation = recommend({
      changeIds: ['1', '2'],
      fixed: [],
      regressed: [],
      outcomes: [listedFew, outcome('2', 0, 1)],
    });
    expect(recommendation.text).toBe(
      'Approve 1: 70 fixed, 0 broken, each replayed alone on the base. Leave out 2: it breaks 1 case and fixes 0.',
    );
  });

  it('with per-change arms: none when no change fixed a case alone without breaking another', () => {
    expect(
      recommend({
        changeIds: ['1', '2'],
        fixed: ['a'],
        regressed: [],
        outcomes: [outcome('1', 1, 1), outcome('2', 0, 0)],
        brokenDetail: () => undefined,
      }),
    ).toEqual({
      changeIds: [],
      text: "Approve none: no change fixed a case alone without breaking another. Leave out 1: it breaks 1 case and fixes 1. 2 changed no case's result.",
    });
  });
});
