/**
 * The drop rules for a draft's findings: signal and run numbers that name nothing shown are
 * dropped, and so is a finding left citing nothing a reviewer could check.
 */
import type { Execution, Signal } from '../../core/schemas/records.ts';
import type { DraftFinding } from '../draft.ts';
import { type DropRule, listOf, plural } from './rule.ts';

/** A drafted finding and the shown signals and runs its numbers resolved to so far. */
export interface FindingUnderReview {
  readonly draft: DraftFinding;
  readonly signals: readonly Signal[];
  readonly executions: readonly Execution[];
}

export interface FindingContext {
  /** The signals the draft's `signalRefs` number, in order: ref 1 is the first. */
  readonly shownSignals: readonly Signal[];
  /** The runs the draft's `executionRefs` number, in order: [E1] is the first. */
  readonly shownExecutions: readonly Execution[];
}

export type FindingRule = DropRule<FindingUnderReview, FindingContext>;

export const underReview = (draft: DraftFinding): FindingUnderReview => ({
  draft,
  signals: [],
  executions: [],
});

/** Maps 1-based refs into `shown`, once each; returns the resolved items and the refs that did not resolve. */
export function resolveRefs<T>(
  refs: readonly number[],
  shown: readonly T[],
): { found: T[]; unknown: number[] } {
  const found: T[] = [];
  const unknown: number[] = [];
  for (const ref of refs) {
    const item = shown[ref - 1];
    if (item === undefined) {
      if (!unknown.includes(ref)) unknown.push(ref);
    } else if (!found.includes(item)) {
      found.push(item);
    }
  }
  return { found, unknown };
}

/** The warning for refs of a finding that name nothing shown: "signal [5]", "runs [E5], [E6]". */
function refsDropped(
  id: string,
  unknown: readonly number[],
  render: (ref: string | number) => string,
  shown: number,
  [one, many]: readonly [string, string],
): string {
  return (
    `Finding ${id} cited ${plural(unknown.length, one, many)} ${listOf(unknown, render)}, but only ${shown} ` +
    `${plural(shown, `${one} was`, `${many} were`)} shown; ` +
    `${plural(unknown.length, 'the reference was', 'those references were')} dropped.`
  );
}

/** Signal numbers beyond the shown signals: dropped, the finding kept. */
export const unknownSignalRefs: FindingRule = {
  type: 'dropped_signal_reference',
  judge(finding, { shownSignals }) {
    const { found, unknown } = resolveRefs(finding.draft.signalRefs, shownSignals);
    const keep = { ...finding, signals: found };
    if (unknown.length === 0) return { keep };
    const render = (ref: string | number) => `[${ref}]`;
    return {
      keep,
      warning: refsDropped(finding.draft.id, unknown, render, shownSignals.length, ['signal', 'signals']),
    };
  },
};

/** Run numbers beyond the shown runs: dropped, the finding kept. */
export const unknownExecutionRefs: FindingRule = {
  type: 'dropped_execution_reference',
  judge(finding, { shownExecutions }) {
    const { found, unknown } = resolveRefs(finding.draft.executionRefs ?? [], shownExecutions);
    const keep = { ...finding, executions: found };
    if (unknown.length === 0) return { keep };
    const render = (ref: string | number) => `[E${ref}]`;
    return {
      keep,
      warning: refsDropped(finding.draft.id, unknown, render, shownExecutions.length, ['run', 'runs']),
    };
  },
};

/** A finding that cites no shown signal or run: a reviewer could not check it, so it is dropped. */
export const uncitedFinding: FindingRule = {
  type: 'uncited_finding',
  judge(finding) {
    if (finding.signals.length > 0 || finding.executions.length > 0) return { keep: finding };
    return {
      drop: `Finding ${finding.draft.id} was dropped: it cites no shown signal or run, so a reviewer could not check it.`,
    };
  },
};

/** In order: a finding's references are resolved before it is judged on what it still cites. */
export const FINDING_RULES: readonly FindingRule[] = [
  unknownSignalRefs,
  unknownExecutionRefs,
  uncitedFinding,
];
