/*
 * heuristic-v1 on a refinement run: its parent's changes revised from the chain's evaluation — a
 * numeric setting that broke cases backed off, one that fixed some but not all pushed further
 * (search.ts), any other change dropped when it broke cases — with a finding per revised change
 * citing the evaluation cases it rests on, beside the fresh findings on the signals.
 */
import type { RefinementEvidence } from '../../core/refinement.ts';
import { changeEffects, detailOf, type Trial } from '../../core/refinement.ts';
import type { Slot } from '../../core/schemas/pipelines.ts';
import type { Execution } from '../../core/schemas/records.ts';
import type { Change } from '../../core/schemas/runs.ts';
import { DRAFT_LIMITS, type DraftChange, type DraftFinding, type SynthesisDraft } from '../draft.ts';
import { EXECUTION_IDS_PER_FINDING } from '../finalize.ts';
import { type NextValue, nextValue, triedValues } from './search.ts';

/** The refined draft, and the evaluation cases each refinement finding rests on (by finding id). */
export interface RefinedDraft {
  draft: SynthesisDraft;
  caseIds: Map<string, string[]>;
}

interface Revision {
  change: Change;
  patch: Record<string, unknown>;
  notes: string[];
  caseIds: string[];
}

const CASES_NAMED = 5;
const clip = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);
const named = (ids: readonly string[]) =>
  ids.length <= CASES_NAMED
    ? ids.join(', ')
    : `${ids.slice(0, CASES_NAMED).join(', ')} and ${ids.length - CASES_NAMED} more`;

function describeMove(key: string, from: unknown, next: NextValue): string {
  if (next.move === 'back-off') {
    return `${key} ${String(from)} broke ${next.caseIds.length} case(s) (${named(next.caseIds)}): backed off to ${next.value}${next.heldAt === null ? '' : `, between ${next.heldAt} (held) and ${String(from)}`}`;
  }
  if (next.move === 'push') {
    return `${key} ${String(from)} fixed cases but ${next.caseIds.length} still fail (${named(next.caseIds)}): pushed to ${next.value}${next.brokeAt === null ? '' : `, below ${next.brokeAt} which broke cases`}`;
  }
  return `${key} kept at ${next.value}${next.brokeAt === null ? '' : ` (${next.brokeAt} broke cases)`}`;
}

/**
 * The still failing cases that fail as the fixed ones did on the base: the runner's detail (else
 * the recorded error) of a fixed case on the base, and of a failing case now. All of them when
 * nothing was recorded to compare.
 */
function sameFailure(evidence: RefinementEvidence) {
  const errorOf = new Map(evidence.cases.map((entry) => [entry.executionId, entry.error]));
  return (trial: Trial, fixed: readonly string[], failing: readonly string[]): string[] => {
    // Numbers aside: "timed out at 2000 ms" is the failure "timed out at 1000 ms" was.
    const why = (id: string, arm: string) =>
      (detailOf(trial, id, arm) ?? errorOf.get(id))?.replace(/\d+(\.\d+)?/g, '#');
    const reasons = new Set(fixed.flatMap((id) => why(id, 'base') ?? []));
    return reasons.size === 0
      ? [...failing]
      : failing.filter((id) => reasons.has(why(id, 'candidate') ?? ''));
  };
}

/** The parent's change revised from the chain's rounds, or null when nothing of it is kept. */
function revise(change: Change, slot: Slot, evidence: RefinementEvidence): Revision | null {
  const parent = evidence.trials.at(-1);
  const effect = parent ? changeEffects(parent).find((entry) => entry.change.id === change.id) : undefined;
  const revision: Revision = { change, patch: {}, notes: [], caseIds: [] };
  for (const [key, value] of Object.entries(change.patch)) {
    const base = slot.settings[key];
    if (typeof value === 'number' && typeof base === 'number') {
      const next = nextValue(base, triedValues(evidence.trials, change.slotId, key, sameFailure(evidence)));
      if (next === null || next.value === base) continue;
      revision.patch[key] = next.value;
      revision.notes.push(describeMove(key, value, next));
      revision.caseIds.push(...next.caseIds);
    } else if (
      // Stryker disable next-line OptionalChaining: the parent's own change always has an effect in the parent's round (changeEffects maps every change), so `effect` is never undefined here.
      (effect?.broken.length ?? 0) === 0
    ) {
      revision.patch[key] = value;
    } else {
      // Stryker disable next-line OptionalChaining,ArrayDeclaration: as above, `effect` is always found.
      revision.notes.push(`${key} dropped: it broke ${named(effect?.broken ?? [])}`);
      // Stryker disable next-line OptionalChaining,ArrayDeclaration: as above, `effect` is always found.
      revision.caseIds.push(...(effect?.broken ?? []));
    }
  }
  return Object.keys(revision.patch).length === 0 ? null : revision;
}

const touches = (change: { slotId: string; patch: Record<string, unknown> }, other: Change) =>
  change.slotId === other.slotId && Object.keys(change.patch).some((key) => key in other.patch);

/**
 * The draft of a refinement: the fresh draft's findings, then one finding per revised change of
 * the parent; the revised changes, then the fresh changes on settings the parent did not touch.
 */
export function refineDraft(
  fresh: SynthesisDraft,
  evidence: RefinementEvidence,
  slots: readonly Slot[],
  shownExecutions: readonly Execution[],
): RefinedDraft {
  const parent = evidence.trials.at(-1);
  const refOf = new Map(shownExecutions.map((execution, index) => [execution.id, index + 1]));
  const findings: DraftFinding[] = [...fresh.diagnosis.findings];
  const changes: DraftChange[] = [];
  const caseIds = new Map<string, string[]>();
  const renumbered = new Map<string, string>();
  // Stryker disable next-line ArrayDeclaration: with no round there is no parent change; a filler entry fits no slot and is skipped alike.
  for (const change of parent?.changes ?? []) {
    const slot = slots.find((candidate) => candidate.id === change.slotId);
    const revision = slot ? revise(change, slot, evidence) : null;
    if (!revision || findings.length >= DRAFT_LIMITS.findings || changes.length >= DRAFT_LIMITS.changes)
      continue;
    const findingId = String(findings.length + 1);
    const cases = [...new Set(revision.caseIds)];
    const freshCited = fresh.changes
      .filter((other) => touches(other, change))
      .flatMap((other) => other.findingIds);
    const executionRefs = cases.flatMap((id) => refOf.get(id) ?? []).slice(0, EXECUTION_IDS_PER_FINDING);
    // A case outside the shown runs cannot be checked there: the signals of the same setting stand in.
    const signalRefs =
      executionRefs.length > 0
        ? []
        : fresh.diagnosis.findings
            .filter((finding) => freshCited.includes(finding.id))
            .flatMap((finding) => finding.signalRefs);
    findings.push({
      id: findingId,
      description: clip(
        `Run ${evidence.parentRunId}'s change ${change.id} on slot "${change.slotId}" in its evaluation: ${revision.notes.join('; ') || 'broke nothing'}.`,
        DRAFT_LIMITS.textLength,
      ),
      signalRefs: [...new Set(signalRefs)].slice(0, DRAFT_LIMITS.signalRefsPerFinding),
      executionRefs,
    });
    caseIds.set(findingId, cases);
    changes.push({
      id: String(changes.length + 1),
      slotId: change.slotId,
      description: clip(
        `Slot "${change.slotId}": ${revision.notes.join('; ') || change.description}`,
        DRAFT_LIMITS.textLength,
      ),
      rationale: clip(
        `Revised from the evaluation of run ${evidence.parentRunId}: ${change.rationale}`,
        DRAFT_LIMITS.rationaleLength,
      ),
      findingIds: [findingId, ...new Set(freshCited)].slice(0, DRAFT_LIMITS.findingIdsPerChange),
      patch: revision.patch,
    });
  }
  for (const change of fresh.changes) {
    if (
      // Stryker disable next-line ArrayDeclaration: with no round, a filler entry touches no fresh change either.
      (parent?.changes ?? []).some((tried) => touches(change, tried)) ||
      changes.length >= DRAFT_LIMITS.changes
    )
      continue;
    const id = String(changes.length + 1);
    renumbered.set(change.id, id);
    changes.push({ ...change, id });
  }
  // Stryker disable next-line ArrayDeclaration: a draft always carries its warnings (the draft schema requires them); the fallback is never taken.
  const warnings = (fresh.warnings ?? []).flatMap((warning) => {
    if (!warning.changeIds) return [warning];
    const ids = warning.changeIds.flatMap((id) => renumbered.get(id) ?? []);
    return ids.length === 0 ? [] : [{ ...warning, changeIds: ids }];
  });
  const summary = clip(
    `${fresh.diagnosis.summary} Refinement of run ${evidence.parentRunId} from its evaluation on ${evidence.cases.length} case(s) (${evidence.heldOutCount} held out, not shown).`,
    DRAFT_LIMITS.textLength,
  );
  return { draft: { diagnosis: { summary, findings }, changes, warnings }, caseIds };
}
