/* Turns any handler's draft into the stored proposal: ids resolved to real signals and runs,
   unknown references and invalid patches dropped with warnings (the tables in drops/), confidence scored. */
import type { SynthesisProposal } from '../core/ports/synthesis.ts';
import type { Configuration } from '../core/schemas/pipelines.ts';
import type { Execution, Signal } from '../core/schemas/records.ts';
import type { Change, Finding, StructuredWarning } from '../core/schemas/runs.ts';
import { assessEvidence, scoreConfidence } from './confidence.ts';
import type { SynthesisDraft } from './draft.ts';
import { CHANGE_RULES, underReview as changeUnderReview } from './drops/changes.ts';
import { FINDING_RULES, underReview as findingUnderReview } from './drops/findings.ts';
import { keptBy, plural, review } from './drops/rule.ts';
import { WARNING_RULES } from './drops/warnings.ts';
import { newestFirst } from './evidence/executions.ts';
import { signalRepeatKey } from './evidence/signals.ts';
import type { JsonObject } from './merge-patch.ts';

export { DROP_WARNING_TYPES, type DropWarningType } from './drops/rule.ts';

export interface FinalizeOptions {
  /** The signals the draft's `signalRefs` number, in order: ref 1 is the first. */
  shownSignals: readonly Signal[];
  baseConfiguration: Pick<Configuration, 'slots'>;
  /** The window the shown signals were picked from; defaults to the shown signals. */
  allSignalsInWindow?: readonly Signal[];
  /** The runs the draft's `executionRefs` number, in order: [E1] is the first. None when absent. */
  shownExecutions?: readonly Execution[];
  /** Every run the synthesis read, to tell whether a slot's runs contradict a finding; defaults to the shown runs. */
  executionsInWindow?: readonly Execution[];
}

/** A finding cites at most this many executions: the most recent that support it. */
export const EXECUTION_IDS_PER_FINDING = 20;

/**
 * A finding cites every signal it counts (a shown signal stands for its repeats in the window), at
 * most this many, newest first; beyond it, its description says how many it counts and cites.
 */
export const SIGNAL_IDS_PER_FINDING = 20;

/**
 * Turns a draft into a proposal: maps signal and run numbers to ids, drops every reference, change
 * and link that does not resolve and every finding that cites nothing (each with a warning naming
 * it), applies the kept patches in order and computes the confidence.
 */
export function finalizeProposal(draft: SynthesisDraft, options: FinalizeOptions): SynthesisProposal {
  const { shownSignals, baseConfiguration } = options;
  const shownExecutions = options.shownExecutions ?? [];
  const allSignalsInWindow = options.allSignalsInWindow ?? shownSignals;
  const drops: StructuredWarning[] = [];
  const findings = keptFindings(draft, shownSignals, shownExecutions, allSignalsInWindow, drops);
  const { changes, settingsBySlot } = keptChanges(draft, findings, baseConfiguration, drops);
  const keptChangeIds = new Set(changes.map((change) => change.id));
  const draftWarnings = keptBy(draft.warnings, WARNING_RULES, { keptChangeIds }, drops);
  const evidence = assessEvidence({
    findings,
    changes,
    shownSignals,
    allSignalsInWindow,
    shownExecutions,
    executionsInWindow: options.executionsInWindow ?? shownExecutions,
  });
  const structuredWarnings = withNoChangesWarning(
    [...draftWarnings, ...evidence.warnings, ...drops],
    changes.length,
    draft.changes.length,
  );
  const { confidence } = scoreConfidence({
    findings,
    shownSignals,
    shownExecutions,
    weakEvidence: evidence.warnings.length > 0,
    allSignalsInWindow,
    drops: drops.length,
  });
  return {
    diagnosis: { summary: draft.diagnosis.summary, findings },
    changes,
    structuredWarnings,
    confidence,
    // The shown signals and every repeat a finding cites for them: what the run read and counts.
    analyzedSignalIds: [
      ...new Set([
        ...shownSignals.map((signal) => signal.id),
        ...findings.flatMap((finding) => finding.signalIds),
      ]),
    ],
    analyzedExecutionIds: shownExecutions.map((execution) => execution.id),
    proposedSlots: proposedSlots(baseConfiguration, settingsBySlot),
  };
}

/** The base configuration's slots with the kept patches applied, as copies. */
const proposedSlots = (base: Pick<Configuration, 'slots'>, settingsBySlot: ReadonlyMap<string, JsonObject>) =>
  base.slots.map((slot) => ({
    ...structuredClone(slot),
    settings: structuredClone(settingsBySlot.get(slot.id) ?? slot.settings),
  }));

/** The findings that pass FINDING_RULES, citing the ids of what they resolved to. */
function keptFindings(
  draft: SynthesisDraft,
  shownSignals: readonly Signal[],
  shownExecutions: readonly Execution[],
  allSignalsInWindow: readonly Signal[],
  drops: StructuredWarning[],
): Finding[] {
  const reviewed = draft.diagnosis.findings.map(findingUnderReview);
  const repeatsOf = new Map<string, Signal[]>();
  for (const signal of allSignalsInWindow) {
    const key = signalRepeatKey(signal);
    repeatsOf.set(key, [...(repeatsOf.get(key) ?? []), signal]);
  }
  return keptBy(reviewed, FINDING_RULES, { shownSignals, shownExecutions }, drops).map((finding) => {
    const counted = citedSignals(finding.signals, repeatsOf);
    const cited = counted.slice(0, SIGNAL_IDS_PER_FINDING);
    const beyond = counted.length > cited.length ? ` (${counted.length} signals, ${cited.length} shown)` : '';
    return {
      id: finding.draft.id,
      description: `${finding.draft.description}${beyond}`,
      signalIds: cited.map((signal) => signal.id),
      executionIds: newestFirst(finding.executions)
        .slice(0, EXECUTION_IDS_PER_FINDING)
        .map((execution) => execution.id),
    };
  });
}

/** The shown signals a finding cites, each followed by its repeats in the window (newest first), once each. */
function citedSignals(shown: readonly Signal[], repeatsOf: ReadonlyMap<string, Signal[]>): Signal[] {
  const ids = new Set<string>();
  const cited: Signal[] = [];
  const add = (signal: Signal) => {
    if (ids.has(signal.id)) return;
    ids.add(signal.id);
    cited.push(signal);
  };
  for (const signal of shown) add(signal);
  for (const signal of shown) {
    const repeats = [...(repeatsOf.get(signalRepeatKey(signal)) ?? [])].sort((a, b) =>
      b.occurredAt.localeCompare(a.occurredAt),
    );
    for (const repeat of repeats) add(repeat);
  }
  return cited;
}

/** The changes that pass CHANGE_RULES, and each slot's settings with their patches applied. */
function keptChanges(
  draft: SynthesisDraft,
  findings: readonly Finding[],
  baseConfiguration: Pick<Configuration, 'slots'>,
  drops: StructuredWarning[],
): { changes: Change[]; settingsBySlot: ReadonlyMap<string, JsonObject> } {
  const findingIds = new Set(findings.map((finding) => finding.id));
  const settingsBySlot = new Map<string, JsonObject>(
    baseConfiguration.slots.map((slot) => [slot.id, structuredClone(slot.settings)]),
  );
  const changes: Change[] = [];
  for (const change of draft.changes) {
    const kept = review(
      changeUnderReview(change, settingsBySlot),
      CHANGE_RULES,
      { findingIds, settingsBySlot },
      drops,
    );
    if (kept === undefined) continue;
    // Later changes on the same slot patch the result of earlier ones: the draft's order is kept.
    settingsBySlot.set(change.slotId, kept.after);
    changes.push({
      id: change.id,
      slotId: change.slotId,
      description: change.description,
      rationale: change.rationale,
      findingIds: kept.findingIds,
      patch: structuredClone(change.patch),
    });
  }
  return { changes, settingsBySlot };
}

/** Adds a no_changes warning when no change is kept and none says so yet: no change was drafted, or all were dropped. */
function withNoChangesWarning(
  warnings: StructuredWarning[],
  kept: number,
  drafted: number,
): StructuredWarning[] {
  if (kept > 0 || warnings.some((warning) => warning.type === 'no_changes')) return warnings;
  const message =
    drafted > 0
      ? `All ${drafted} drafted ${plural(drafted, 'change was', 'changes were')} ` +
        'dropped; the proposal equals the base configuration.'
      : 'No changes are proposed; the proposal equals the base configuration.';
  return [...warnings, { type: 'no_changes', message }];
}
