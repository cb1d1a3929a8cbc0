/*
 * A pipeline's approval rules as a table of small named checks: which rules an approval breaks,
 * and which of them an admin's override may pass (the evaluation rules, never self-approval);
 * regressions are counted on what is approved (the chosen changes alone, or the whole candidate).
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
  /** Every change of the run, by id, in order. */
  runChangeIds: readonly string[];
  /** The changes approved; undefined: every change of the run. */
  chosenChangeIds?: readonly string[] | undefined;
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

/** What the regressions of an approval were counted on, as the 409's `details.regressions` says. */
export interface JudgedRegressions {
  /** `chosen_changes`: each chosen change's own arm (`change:<id>`); `candidate`: every change together. */
  basis: 'chosen_changes' | 'candidate';
  /** The changes approved. */
  changeIds: string[];
  /** Cases broken: the union of the chosen changes' broken cases, or the candidate's regressed ones. */
  regressed: number;
  /** The basis in words, e.g. "judged on changes 1 and 4, each replayed alone on the base". */
  text: string;
}

const listed = (ids: readonly string[]) =>
  ids.length <= 1 ? ids.join('') : `${ids.slice(0, -1).join(', ')} and ${ids.at(-1)}`;
const changesWord = (ids: readonly string[]) => `change${ids.length === 1 ? '' : 's'} ${listed(ids)}`;

/**
 * Regressions counted on what is approved: a part of the proposal whose every change was replayed
 * alone is judged on those changes' broken cases (their union; a change listing only its first
 * ids counts the rest as distinct, so the count never falls short); all changes, or a part with a
 * change never replayed alone, on the whole candidate. Null before any evaluation, or with no change chosen.
 */
export function judgedRegressions(
  attempt: Pick<ApprovalAttempt, 'evaluation' | 'runChangeIds' | 'chosenChangeIds'>,
): JudgedRegressions | null {
  const { evaluation, runChangeIds } = attempt;
  if (!evaluation) return null;
  const chosen = [...(attempt.chosenChangeIds ?? runChangeIds)];
  if (chosen.length === 0) return null;
  const candidate = (text: string): JudgedRegressions => ({
    basis: 'candidate',
    changeIds: chosen,
    regressed: evaluation.regressed.length,
    text,
  });
  if (chosen.length >= runChangeIds.length)
    return candidate('judged on the whole candidate (every change together)');
  const outcomes = new Map((evaluation.changes ?? []).map((outcome) => [outcome.changeId, outcome]));
  const missing = chosen.filter((id) => !outcomes.has(id));
  if (missing.length > 0)
    return candidate(
      `judged on the whole candidate, as ${changesWord(missing)} ${missing.length === 1 ? 'was' : 'were'} not replayed alone (evaluate --per-change)`,
    );
  const broken = new Set<string>();
  let unlisted = 0;
  for (const id of chosen) {
    const outcome = outcomes.get(id);
    if (!outcome) continue;
    for (const caseId of outcome.broken) broken.add(caseId);
    unlisted += outcome.brokenCount - outcome.broken.length;
  }
  return {
    basis: 'chosen_changes',
    changeIds: chosen,
    regressed: broken.size + unlisted,
    text: `judged on ${changesWord(chosen)}, each replayed alone on the base`,
  };
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
    check: (rules, attempt) => {
      const judged = judgedRegressions(attempt);
      return judged && judged.regressed > rules.maxRegressions
        ? `${judged.regressed} case(s) regressed, ${judged.text}; the pipeline allows at most ${rules.maxRegressions}.`
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
