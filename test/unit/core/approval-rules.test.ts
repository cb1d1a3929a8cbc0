import { describe, expect, it } from 'vitest';
import { type ApprovalAttempt, failingRules } from '../../../lambdas/core/approval-rules.ts';
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
      '3 case(s) regressed; the pipeline allows at most 1.',
    ]);
    expect(messages(rules({ minEvaluatedCases: 12 }), attempt({ evaluation: evaluation() }))).toEqual([
      '10 case(s) were evaluated on both arms; the pipeline requires at least 12.',
    ]);
    expect(messages(rules({ forbidSelfApproval: true }), attempt({ approverUserId: 'alice' }))).toEqual([
      'The pipeline forbids approving a run you started: another person must approve it.',
    ]);
  });
});
