/**
 * The approve form's choices, pure (tested in test/unit/web): which changes start ticked and why
 * some do not, the request body the form's state makes (or the errors that stop it), and what an
 * approval will do, in the words its confirmation shows.
 */
import { listWords } from './format.ts';
import type { Run } from './types.ts';

/** The form as the person left it; numbers stay the text typed, so a typo is an error, not "empty". */
export interface ApproveForm {
  chosen: ReadonlySet<string>;
  rebase: boolean;
  /** "Roll out to a share of traffic first" is ticked. */
  rollout: boolean;
  percent: string;
  minExecutions: string;
  autoPromote: boolean;
}

/** What POST /synthesis-runs/{id}/approve is sent: exactly the form's choices. */
export interface ApproveRequest {
  changeIds?: string[];
  rebase?: true;
  rollout?: { percent: number; minExecutions?: number; autoPromote?: true };
  override?: { reason: string };
}

export interface FormErrors {
  changes?: string;
  percent?: string;
  minExecutions?: string;
}

/** A rollout's minimum executions per arm when the form leaves it empty (the API's default). */
export const DEFAULT_MIN_EXECUTIONS = 200;
/** A rollout's share when the box is first ticked. */
export const DEFAULT_PERCENT = '10';

/** The warnings that make a change a doubtful default: the person ticks it deliberately. */
const DOUBTFUL_WARNINGS: Record<string, string> = {
  speculative_change: 'the synthesis calls it a guess',
  contradicted_evidence: 'recorded executions contradict the evidence it rests on',
  conflicting_evidence: 'the evidence for it conflicts',
};

/** The run's changes in number order (1, 2, … 10), not in the order of their slots. */
export function changesByNumber(run: Pick<Run, 'changes'>): Run['changes'] {
  return [...run.changes].sort((a, b) => Number(a.id) - Number(b.id) || a.id.localeCompare(b.id));
}

/**
 * Which changes start ticked: all but those a warning calls speculative or contradicted, and those
 * that broke a case when replayed alone; `why` says, per change left unticked, the reason.
 */
export function defaultChoice(run: Pick<Run, 'changes' | 'structuredWarnings' | 'evaluation'>): {
  chosen: Set<string>;
  why: Map<string, string>;
} {
  const why = new Map<string, string>();
  for (const warning of run.structuredWarnings) {
    const reason = DOUBTFUL_WARNINGS[warning.type];
    if (!reason) continue;
    for (const id of warning.changeIds ?? []) if (!why.has(id)) why.set(id, reason);
  }
  for (const outcome of run.evaluation?.changes ?? []) {
    if (outcome.brokenCount > 0 && !why.has(outcome.changeId))
      why.set(
        outcome.changeId,
        `replayed alone it broke ${outcome.brokenCount} case${outcome.brokenCount === 1 ? '' : 's'}`,
      );
  }
  const chosen = new Set(run.changes.map((change) => change.id).filter((id) => !why.has(id)));
  return { chosen, why };
}

/** A whole number typed in a box (a trailing "%" allowed), or null when it is not one. */
function wholeNumber(text: string): number | null {
  const match = /^\s*(\d{1,6})\s*%?\s*$/.exec(text);
  return match ? Number(match[1]) : null;
}

/** The request the form makes, or the errors that keep Approve from sending anything. */
export function checkApproveForm(
  run: Pick<Run, 'changes'>,
  form: ApproveForm,
): { body: ApproveRequest | null; errors: FormErrors } {
  const errors: FormErrors = {};
  const chosen = changesByNumber(run)
    .map((change) => change.id)
    .filter((id) => form.chosen.has(id));
  if (chosen.length === 0) errors.changes = 'Choose at least one change to approve.';
  let rollout: ApproveRequest['rollout'];
  if (form.rollout) {
    const percent = wholeNumber(form.percent);
    if (percent === null || percent < 1 || percent > 99)
      errors.percent =
        'Enter a whole percent from 1 to 99, e.g. 10; or untick "Roll out to a share of traffic first" to release to all traffic at once.';
    const min = form.minExecutions.trim() === '' ? undefined : wholeNumber(form.minExecutions);
    if (min === null || (min !== undefined && (min < 30 || min > 100_000)))
      errors.minExecutions = `Enter a whole number of executions from 30 to 100,000, or leave it empty for ${DEFAULT_MIN_EXECUTIONS}.`;
    if (percent !== null)
      rollout = {
        percent,
        ...(min ? { minExecutions: min } : {}),
        ...(form.autoPromote ? { autoPromote: true as const } : {}),
      };
  }
  if (Object.keys(errors).length > 0) return { body: null, errors };
  return {
    body: {
      ...(chosen.length === run.changes.length ? {} : { changeIds: chosen }),
      ...(form.rebase ? { rebase: true as const } : {}),
      ...(rollout ? { rollout } : {}),
    },
    errors,
  };
}

const capital = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);
const changesWord = (ids: readonly string[]) =>
  `${ids.length === 1 ? 'change' : 'changes'} ${listWords(ids)}`;

/**
 * What approving will do, in one or two sentences: "Changes 1, 4 and 5 go live for 10 % of
 * traffic first; 2 and 3 are left out." Rebase and the rollout's guardrails follow.
 */
export function describeApproval(run: Pick<Run, 'changes'>, body: ApproveRequest): string {
  const all = changesByNumber(run).map((change) => change.id);
  const chosen = body.changeIds ?? all;
  const left = all.filter((id) => !chosen.includes(id));
  const live = body.rollout
    ? `for ${body.rollout.percent} % of traffic first (the other ${100 - body.rollout.percent} % keeps the active configuration)`
    : 'for all traffic at once';
  const parts = [
    `${capital(chosen.length === all.length && all.length > 1 ? `all ${all.length} changes (${listWords(all)})` : changesWord(chosen))} ${chosen.length === 1 ? 'goes' : 'go'} live ${live}${
      left.length > 0 ? `; ${listWords(left)} ${left.length === 1 ? 'is' : 'are'} left out.` : '.'
    }`,
  ];
  if (body.rebase) parts.push('They are applied on top of the configuration active now, if it moved.');
  if (body.rollout)
    parts.push(
      `The candidate is rolled back automatically once its failure rate is shown worse than the base's; once it has ${body.rollout.minExecutions ?? DEFAULT_MIN_EXECUTIONS} executions and its failure rate is shown within 1 percentage point of the base's, it ${
        body.rollout.autoPromote ? 'is promoted automatically' : 'can be promoted by hand'
      }.`,
    );
  if (body.override)
    parts.push("It is approved against the pipeline's approval rules; your reason is kept with the run.");
  return parts.join(' ');
}
