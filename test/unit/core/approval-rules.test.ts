import { describe, expect, it } from 'vitest';
import {
  type ApprovalAttempt,
  failingRules,
  judgedRegressions,
} from '../../../lambdas/core/approval-rules.ts';
import type { EvaluationSummary } from '../../../lambdas/core/schemas/evaluation.ts';
import { APPROVAL_RULE_DEFAULTS, type ApprovalRules } from '../../../lambdas/core/schemas/review.ts';

const evaluation = (over: Partial<EvaluationSummary> = {}): EvaluationSummary => ({
  cases: 10,
  evaluated: 10,
  base: { passed: 8, failed: 2 },
  candidate: { passed: 9, failed: 1 },
  fixed: ['a'],
  regressed: [],
  durationMsDelta: null,
  costUsdDelta: null,
  updatedAt: '2026-01-01T00:00:00.000Z',
  ...over,
});
const attempt = (over: Partial<ApprovalAttempt> = {}): ApprovalAttempt => ({
  evaluation: undefined,
  runChangeIds: ['1', '2', '3'],
  triggeredBy: 'alice',
  approverUserId: 'bob',
  overridden: false,
  ...over,
});
const rules = (over: Partial<ApprovalRules> = {}): ApprovalRules => ({ ...APPROVAL_RULE_DEFAULTS, ...over });
const names = (r: ApprovalRules, a: ApprovalAttempt) => failingRules(r, a).map((f) => f.rule);

describe('approval rules', () => {
  it('pass anything under the defaults, self-approval and no evaluation included', () => {
    expect(names(rules(), attempt({ approverUserId: 'alice' }))).toEqual([]);
  });

  it('requireEvaluation fails without an evaluated case', () => {
    expect(names(rules({ requireEvaluation: true }), attempt())).toEqual(['requireEvaluation']);
    expect(
      names(rules({ requireEvaluation: true }), attempt({ evaluation: evaluation({ evaluated: 0 }) })),
    ).toEqual(['requireEvaluation']);
    expect(names(rules({ requireEvaluation: true }), attempt({ evaluation: evaluation() }))).toEqual([]);
  });

  it('maxRegressions fails when more cases regressed than allowed', () => {
    const twoRegressed = attempt({ evaluation: evaluation({ regressed: ['x', 'y'] }) });
    expect(names(rules(), twoRegressed)).toEqual(['maxRegressions']);
    expect(names(rules({ maxRegressions: 2 }), twoRegressed)).toEqual([]);
  });

  it('minEvaluatedCases fails below the minimum', () => {
    expect(names(rules({ minEvaluatedCases: 11 }), attempt({ evaluation: evaluation() }))).toEqual([
      'minEvaluatedCases',
    ]);
    expect(names(rules({ minEvaluatedCases: 10 }), attempt({ evaluation: evaluation() }))).toEqual([]);
  });

  it('forbidSelfApproval fails for the user who triggered the run', () => {
    expect(names(rules({ forbidSelfApproval: true }), attempt({ approverUserId: 'alice' }))).toEqual([
      'forbidSelfApproval',
    ]);
    expect(names(rules({ forbidSelfApproval: true }), attempt())).toEqual([]);
  });

  it('names every failing rule; an override passes the evaluation rules but never self-approval', () => {
    const strict = rules({ requireEvaluation: true, minEvaluatedCases: 5, forbidSelfApproval: true });
    const self = attempt({ approverUserId: 'alice' });
    expect(names(strict, self)).toEqual(['requireEvaluation', 'minEvaluatedCases', 'forbidSelfApproval']);
    expect(names(strict, { ...self, overridden: true })).toEqual(['forbidSelfApproval']);
    expect(names(strict, attempt({ overridden: true }))).toEqual([]);
  });

  it('tells the approver why, with the figures and what to do', () => {
    const messages = (r: ApprovalRules, a: ApprovalAttempt) => failingRules(r, a).map((f) => f.message);
    expect(messages(rules({ requireEvaluation: true }), attempt())).toEqual([
      'The pipeline requires an evaluation: replay the evaluation set (pipeline-synthesis evaluate) before approving.',
    ]);
    const threeRegressed = attempt({ evaluation: evaluation({ regressed: ['x', 'y', 'z'] }) });
    expect(messages(rules({ maxRegressions: 1 }), threeRegressed)).toEqual([
      '3 case(s) regressed, judged on the whole candidate (every change together); the pipeline allows at most 1.',
    ]);
    expect(messages(rules({ minEvaluatedCases: 12 }), attempt({ evaluation: evaluation() }))).toEqual([
      '10 case(s) were evaluated on both arms; the pipeline requires at least 12.',
    ]);
    expect(messages(rules({ forbidSelfApproval: true }), attempt({ approverUserId: 'alice' }))).toEqual([
      'The pipeline forbids approving a run you started: another person must approve it.',
    ]);
  });

  describe('regressions are counted on what is approved', () => {
    /** Change 1 fixes a case alone, 3 breaks x and y, 2 was never replayed alone; together: x, y regressed. */
    const perChange = evaluation({
      regressed: ['x', 'y'],
      changes: [
        { changeId: '1', evaluated: 10, fixed: ['a'], fixedCount: 1, broken: [], brokenCount: 0 },
        { changeId: '3', evaluated: 10, fixed: [], fixedCount: 0, broken: ['x', 'y'], brokenCount: 2 },
      ],
    });
    const approving = (chosenChangeIds?: string[]) => attempt({ evaluation: perChange, chosenChangeIds });

    it('a part whose every change was replayed alone is judged on those changes: leaving out the breaking one passes', () => {
      expect(names(rules(), approving(['1']))).toEqual([]);
      expect(judgedRegressions(approving(['1']))).toEqual({
        basis: 'chosen_changes',
        changeIds: ['1'],
        regressed: 0,
        text: 'judged on change 1, each replayed alone on the base',
      });
      expect(failingRules(rules(), approving(['1', '3'])).map((f) => f.message)).toEqual([
        '2 case(s) regressed, judged on changes 1 and 3, each replayed alone on the base; the pipeline allows at most 0.',
      ]);
    });

    it('every change, or a part with a change never replayed alone, is judged on the whole candidate', () => {
      expect(judgedRegressions(approving())).toMatchObject({ basis: 'candidate', regressed: 2 });
      expect(judgedRegressions(approving(['1', '2', '3']))).toMatchObject({ basis: 'candidate' });
      expect(judgedRegressions(approving(['1', '2']))).toEqual({
        basis: 'candidate',
        changeIds: ['1', '2'],
        regressed: 2,
        text: 'judged on the whole candidate, as change 2 was not replayed alone (evaluate --per-change)',
      });
      expect(names(rules(), approving(['1', '2']))).toEqual(['maxRegressions']);
    });

    it('counts a case two chosen changes break once, and a change listing only its first ids in full', () => {
      const overlapping = evaluation({
        changes: [
          { changeId: '1', evaluated: 9, fixed: [], fixedCount: 0, broken: ['x', 'y'], brokenCount: 2 },
          { changeId: '2', evaluated: 9, fixed: [], fixedCount: 0, broken: ['y', 'z'], brokenCount: 60 },
        ],
      });
      expect(
        judgedRegressions({ evaluation: overlapping, runChangeIds: ['1', '2', '3'], chosenChangeIds: ['1'] })
          ?.regressed,
      ).toBe(2);
      // x, y, z listed, and 58 of change 2's broken cases beyond its listed ids.
      expect(
        judgedRegressions({
          evaluation: overlapping,
          runChangeIds: ['1', '2', '3'],
          chosenChangeIds: ['1', '2'],
        })?.regressed,
      ).toBe(61);
      expect(judgedRegressions({ evaluation: undefined, runChangeIds: ['1'] })).toBeNull();
      expect(
        judgedRegressions({ evaluation: overlapping, runChangeIds: ['1'], chosenChangeIds: [] }),
      ).toBeNull();
    });
  });
});
