/*
 * A pipeline's approval rules as a table of small named checks: which rules an approval breaks,
 * and which of them an admin's override may pass (the evaluation rules, never self-approval).
 */

import type { EvaluationSummary } from './schemas/evaluation.ts';
import type { ApprovalRules } from './schemas/review.ts';

export type ApprovalRuleName =
  | 'requireEvaluation'
  | 'maxRegressions'
  | 'minEvaluatedCases'
  | 'forbidSelfApproval';

/** What the rules are checked against: the run's evaluation and who approves it. */
export interface ApprovalAttempt {
  evaluation: EvaluationSummary | null | undefined;
  /** The user who triggered the run. */
  triggeredBy: string;
  approverUserId: string;
  /** An admin's override reason (the caller checked the role). */
  overridden: boolean;
}

/** A failing rule, as `details.rules` of the 409 lists it. */
export interface FailingRule {
  rule: ApprovalRuleName;
  message: string;
}

interface RuleRow {
  rule: ApprovalRuleName;
  /** An admin's override passes it. */
  overridable: boolean;
  /** The message when it fails, or null when it holds. */
  check(rules: ApprovalRules, attempt: ApprovalAttempt): string | null;
}

const RULES: readonly RuleRow[] = [
  {
    rule: 'requireEvaluation',
    overridable: true,
    check: (rules, { evaluation }) =>
      rules.requireEvaluation && (evaluation?.evaluated ?? 0) === 0
        ? 'The pipeline requires an evaluation: replay the evaluation set (pipeline-synthesis evaluate) before approving.'
        : null,
  },
  {
    rule: 'maxRegressions',
    overridable: true,
    check: (rules, { evaluation }) => {
      const regressed = evaluation?.regressed.length ?? 0;
      return regressed > rules.maxRegressions
        ? `${regressed} case(s) regressed; the pipeline allows at most ${rules.maxRegressions}.`
        : null;
    },
  },
  {
    rule: 'minEvaluatedCases',
    overridable: true,
    check: (rules, { evaluation }) => {
      const evaluated = evaluation?.evaluated ?? 0;
      return evaluated < rules.minEvaluatedCases
        ? `${evaluated} case(s) were evaluated on both arms; the pipeline requires at least ${rules.minEvaluatedCases}.`
        : null;
    },
  },
  {
    rule: 'forbidSelfApproval',
    overridable: false,
    check: (rules, { triggeredBy, approverUserId }) =>
      rules.forbidSelfApproval && triggeredBy === approverUserId
        ? 'The pipeline forbids approving a run you started: another person must approve it.'
        : null,
  },
];

/** The rules an approval breaks; an override passes the overridable ones. Empty: it may proceed. */
export function failingRules(rules: ApprovalRules, attempt: ApprovalAttempt): FailingRule[] {
  return RULES.flatMap((row) => {
    if (attempt.overridden && row.overridable) return [];
    const message = row.check(rules, attempt);
    return message === null ? [] : [{ rule: row.rule, message }];
  });
}
