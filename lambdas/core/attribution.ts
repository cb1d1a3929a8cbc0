/*
 * Per-change attribution of a run's evaluation, pure: what each change did alone on the base
 * (its `change:<id>` arm), the held-out cases' figures, and which changes to approve, in words.
 */
import type { ResultsByCase } from './evaluation.ts';
import type { ChangeOutcome, HeldOutFigures, Recommendation } from './schemas/evaluation.ts';

/** Ids a change outcome lists at most (its counts count them all): the run item stays small. */
export const OUTCOME_IDS = 50;
/** The runner's words quoted for a change that breaks cases, at most. */
const DETAIL_CHARS = 80;

/** Each change's arm against the base, over the cases with a result on both; only changes replayed alone. */
export function changeOutcomes(
  caseIds: readonly string[],
  arms: ResultsByCase,
  changeIds: readonly string[],
): ChangeOutcome[] {
  return changeIds.flatMap((changeId) => {
    const arm = `change:${changeId}`;
    const fixed: string[] = [];
    const broken: string[] = [];
    let evaluated = 0;
    for (const id of caseIds) {
      const base = arms.get(id)?.get('base');
      const alone = arms.get(id)?.get(arm);
      if (!base || !alone) continue;
      evaluated += 1;
      if (!base.passed && alone.passed) fixed.push(id);
      if (base.passed && !alone.passed) broken.push(id);
    }
    if (evaluated === 0) return [];
    return [
      {
        changeId,
        evaluated,
        fixed: fixed.slice(0, OUTCOME_IDS),
        fixedCount: fixed.length,
        broken: broken.slice(0, OUTCOME_IDS),
        brokenCount: broken.length,
      },
    ];
  });
}

/** The held-out cases' figures: base against candidate, as for the whole set. */
export function heldOutFigures(
  caseIds: readonly string[],
  arms: ResultsByCase,
  heldOut: ReadonlySet<string>,
): HeldOutFigures {
  const figures: HeldOutFigures = {
    cases: 0,
    evaluated: 0,
    baseFailed: 0,
    fixed: [],
    regressed: [],
    stillFailing: [],
  };
  for (const id of caseIds) {
    if (!heldOut.has(id)) continue;
    figures.cases += 1;
    const base = arms.get(id)?.get('base');
    const candidate = arms.get(id)?.get('candidate');
    if (!base || !candidate) continue;
    figures.evaluated += 1;
    if (!base.passed) figures.baseFailed += 1;
    if (!base.passed && candidate.passed) figures.fixed.push(id);
    else if (base.passed && !candidate.passed) figures.regressed.push(id);
    else if (!base.passed && !candidate.passed) figures.stillFailing.push(id);
  }
  return figures;
}

/** "1", "1 and 3", "1, 2 and 3". */
export function listWords(ids: readonly string[]): string {
  if (ids.length <= 1) return ids.join('');
  return `${ids.slice(0, -1).join(', ')} and ${ids.at(-1)}`;
}

const cases = (count: number) => `${count} case${count === 1 ? '' : 's'}`;

export interface RecommendInput {
  changeIds: readonly string[];
  /** The candidate's figures (every change together). */
  fixed: readonly string[];
  regressed: readonly string[];
  outcomes: readonly ChangeOutcome[];
  /** The runner's words on a case a change broke, to name what it breaks. */
  brokenDetail?: (changeId: string) => string | undefined;
}

/**
 * Which changes to approve: with per-change arms, those that fixed a case alone and broke none;
 * without them, every change when the candidate regressed nothing, else none until they are
 * replayed alone. The text says it as a reviewer would, figures first.
 */
export function recommend(input: RecommendInput): Recommendation {
  const { changeIds, fixed, regressed, outcomes } = input;
  if (changeIds.length === 0)
    return { changeIds: [], text: 'Nothing to approve: the proposal makes no change.' };
  if (outcomes.length === 0) return recommendWithoutArms(changeIds, fixed, regressed);
  const byId = new Map(outcomes.map((outcome) => [outcome.changeId, outcome]));
  const good = changeIds.filter((id) => {
    const outcome = byId.get(id);
    return outcome !== undefined && outcome.brokenCount === 0 && outcome.fixedCount > 0;
  });
  const parts: string[] = [];
  if (good.length === changeIds.length) {
    parts.push(
      `Approve ${changeIds.length === 1 ? 'change 1' : `all ${changeIds.length} changes`}: ${fixed.length} fixed, ${regressed.length} broken.`,
    );
  } else if (good.length > 0) {
    const fixedAlone = new Set(good.flatMap((id) => byId.get(id)?.fixed ?? []));
    const counted = good.reduce((sum, id) => Math.max(sum, byId.get(id)?.fixedCount ?? 0), 0);
    parts.push(
      `Approve ${listWords(good)}: ${Math.max(fixedAlone.size, counted)} fixed, 0 broken, each replayed alone on the base.`,
    );
  } else {
    parts.push('Approve none: no change fixed a case alone without breaking another.');
  }
  for (const id of changeIds) {
    const outcome = byId.get(id);
    if (outcome === undefined) parts.push(`${id} was not replayed alone.`);
    else if (outcome.brokenCount > 0) {
      const detail = input.brokenDetail?.(id);
      const words = detail ? ` ("${detail.split('\n')[0]?.slice(0, DETAIL_CHARS)}")` : '';
      parts.push(
        `Leave out ${id}: it breaks ${cases(outcome.brokenCount)}${words} and fixes ${outcome.fixedCount}.`,
      );
    } else if (outcome.fixedCount === 0 && good.length !== changeIds.length) {
      parts.push(`${id} changed no case's result.`);
    }
  }
  return { changeIds: good, text: parts.join(' ') };
}

function recommendWithoutArms(
  changeIds: readonly string[],
  fixed: readonly string[],
  regressed: readonly string[],
): Recommendation {
  const all = changeIds.length === 1 ? 'change 1' : `all ${changeIds.length} changes`;
  if (regressed.length === 0 && fixed.length > 0)
    return { changeIds: [...changeIds], text: `Approve ${all}: ${fixed.length} fixed, 0 broken.` };
  if (regressed.length === 0)
    return { changeIds: [], text: 'Nothing to approve yet: the proposal fixed no case.' };
  return {
    changeIds: [],
    text:
      `Approve none yet: the proposal breaks ${cases(regressed.length)} and fixes ${fixed.length}` +
      (changeIds.length === 1
        ? '.'
        : '; replay each change alone (evaluate --per-change) to see which change breaks them.'),
  };
}
