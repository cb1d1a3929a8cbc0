/* Turns any handler's draft into the stored proposal: ids resolved to real signals and runs,
   unknown references and invalid patches dropped with warnings, confidence scored. */
import { isDeepStrictEqual } from 'node:util';
import type { SynthesisProposal } from '../core/ports.ts';
import type {
  Change,
  Configuration,
  Execution,
  Finding,
  Signal,
  StructuredWarning,
} from '../core/schemas.ts';
import { slotSettingsSchema } from '../core/schemas.ts';
import { assessEvidence, scoreConfidence } from './confidence.ts';
import type { SynthesisDraft } from './draft.ts';
import { newestFirst } from './evidence/executions.ts';
import { applyMergePatch, type JsonObject } from './merge-patch.ts';

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

/** Warning types the code adds when it has to drop part of a draft. */
export const DROP_WARNING_TYPES = [
  'dropped_signal_reference',
  'dropped_execution_reference',
  'uncited_finding',
  'unknown_slot',
  'unknown_finding',
  'uncited_change',
  'invalid_patch',
  'no_op_change',
  'dropped_change_reference',
] as const;
export type DropWarningType = (typeof DROP_WARNING_TYPES)[number];

const ISSUE_SUMMARY_LENGTH = 300;

const listOf = (items: readonly (string | number)[], render: (item: string | number) => string): string =>
  items.map(render).join(', ');
const plural = (count: number, one: string, many: string): string => (count === 1 ? one : many);

/**
 * Turns a draft into a proposal: maps signal and run numbers to ids, drops every reference, change
 * and link that does not resolve and every finding that cites nothing (each with a warning naming
 * it), applies the kept patches in order and computes the confidence.
 */
export function finalizeProposal(draft: SynthesisDraft, options: FinalizeOptions): SynthesisProposal {
  const { shownSignals, baseConfiguration } = options;
  const shownExecutions = options.shownExecutions ?? [];
  const drops: StructuredWarning[] = [];
  const drop = (type: DropWarningType, message: string): void => {
    drops.push({ type, message });
  };

  /** Maps 1-based refs into `shown`; returns the resolved items and the refs that did not resolve. */
  const resolve = <T extends { id: string }>(refs: readonly number[], shown: readonly T[]) => {
    const found: T[] = [];
    const unknown: number[] = [];
    for (const ref of refs) {
      const item = Number.isInteger(ref) && ref >= 1 ? shown[ref - 1] : undefined;
      if (item === undefined) {
        if (!unknown.includes(ref)) unknown.push(ref);
      } else if (!found.includes(item)) {
        found.push(item);
      }
    }
    return { found, unknown };
  };

  const findings: Finding[] = [];
  for (const finding of draft.diagnosis.findings) {
    const signals = resolve(finding.signalRefs, shownSignals);
    if (signals.unknown.length > 0) {
      drop(
        'dropped_signal_reference',
        `Finding ${finding.id} cited ${plural(signals.unknown.length, 'signal', 'signals')} ` +
          `${listOf(signals.unknown, (ref) => `[${ref}]`)}, but only ${shownSignals.length} ` +
          `${plural(shownSignals.length, 'signal was', 'signals were')} shown; ` +
          `${plural(signals.unknown.length, 'the reference was', 'those references were')} dropped.`,
      );
    }
    const executions = resolve(finding.executionRefs ?? [], shownExecutions);
    if (executions.unknown.length > 0) {
      drop(
        'dropped_execution_reference',
        `Finding ${finding.id} cited ${plural(executions.unknown.length, 'run', 'runs')} ` +
          `${listOf(executions.unknown, (ref) => `[E${ref}]`)}, but only ${shownExecutions.length} ` +
          `${plural(shownExecutions.length, 'run was', 'runs were')} shown; ` +
          `${plural(executions.unknown.length, 'the reference was', 'those references were')} dropped.`,
      );
    }
    if (signals.found.length === 0 && executions.found.length === 0) {
      drop(
        'uncited_finding',
        `Finding ${finding.id} was dropped: it cites no shown signal or run, so a reviewer could not check it.`,
      );
      continue;
    }
    findings.push({
      id: finding.id,
      description: finding.description,
      signalIds: signals.found.map((signal) => signal.id),
      executionIds: newestFirst(executions.found)
        .slice(0, EXECUTION_IDS_PER_FINDING)
        .map((execution) => execution.id),
    });
  }
  const findingIds = new Set(findings.map((finding) => finding.id));

  const settingsBySlot = new Map<string, JsonObject>(
    baseConfiguration.slots.map((slot) => [slot.id, structuredClone(slot.settings)]),
  );
  const changes: Change[] = [];
  for (const change of draft.changes) {
    const current = settingsBySlot.get(change.slotId);
    if (current === undefined) {
      drop(
        'unknown_slot',
        `Change ${change.id} was dropped: it targets slot "${change.slotId}", which is not in the base configuration.`,
      );
      continue;
    }

    const cited = [...new Set(change.findingIds)];
    const known = cited.filter((id) => findingIds.has(id));
    const unknown = cited.filter((id) => !findingIds.has(id));
    if (known.length === 0) {
      drop(
        'uncited_change',
        `Change ${change.id} was dropped: it cites no finding of the diagnosis` +
          (unknown.length > 0 ? ` (it named ${listOf(unknown, (id) => `finding ${id}`)}).` : '.'),
      );
      continue;
    }
    if (unknown.length > 0) {
      drop(
        'unknown_finding',
        `Change ${change.id} cited ${listOf(unknown, (id) => `finding ${id}`)}, which the diagnosis does not ` +
          `contain; ${plural(unknown.length, 'the reference was', 'those references were')} dropped.`,
      );
    }

    let next: JsonObject;
    try {
      next = applyMergePatch(current, change.patch);
    } catch (error) {
      // Stryker disable next-line StringLiteral: applyMergePatch throws Error instances only, so this fallback is never shown
      const reason = error instanceof Error ? error.message : 'it cannot be applied';
      drop('invalid_patch', `Change ${change.id} was dropped: ${reason}.`);
      continue;
    }
    const checked = slotSettingsSchema.safeParse(next);
    if (!checked.success) {
      const issues = checked.error.issues
        .map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : 'settings'}: ${issue.message}`)
        .join('; ')
        .slice(0, ISSUE_SUMMARY_LENGTH);
      drop(
        'invalid_patch',
        `Change ${change.id} was dropped: its patch would make the settings of slot "${change.slotId}" invalid (${issues}).`,
      );
      continue;
    }
    if (isDeepStrictEqual(next, current)) {
      drop(
        'no_op_change',
        `Change ${change.id} was dropped: its patch leaves the settings of slot "${change.slotId}" unchanged.`,
      );
      continue;
    }

    // Later changes on the same slot patch the result of earlier ones: the draft's order is kept.
    settingsBySlot.set(change.slotId, next);
    changes.push({
      id: change.id,
      slotId: change.slotId,
      description: change.description,
      rationale: change.rationale,
      findingIds: known,
      patch: structuredClone(change.patch),
    });
  }

  const keptChangeIds = new Set(changes.map((change) => change.id));
  const draftWarnings: StructuredWarning[] = draft.warnings.map((warning) => {
    if (warning.changeIds === undefined) return { type: warning.type, message: warning.message };
    const named = [...new Set(warning.changeIds)];
    const kept = named.filter((id) => keptChangeIds.has(id));
    const gone = named.filter((id) => !keptChangeIds.has(id));
    if (gone.length > 0) {
      drop(
        'dropped_change_reference',
        `Warning "${warning.type}" named ${listOf(gone, (id) => `change ${id}`)}, which ` +
          `${plural(gone.length, 'is', 'are')} not in the proposal; ` +
          `${plural(gone.length, 'the reference was', 'those references were')} dropped.`,
      );
    }
    return kept.length > 0
      ? { type: warning.type, message: warning.message, changeIds: kept }
      : { type: warning.type, message: warning.message };
  });

  const evidence = assessEvidence({
    findings,
    changes,
    shownSignals,
    allSignalsInWindow: options.allSignalsInWindow ?? shownSignals,
    shownExecutions,
    executionsInWindow: options.executionsInWindow ?? shownExecutions,
  });
  const structuredWarnings = [...draftWarnings, ...evidence.warnings, ...drops];
  if (changes.length === 0 && !structuredWarnings.some((warning) => warning.type === 'no_changes')) {
    structuredWarnings.push({
      type: 'no_changes',
      message:
        draft.changes.length > 0
          ? `All ${draft.changes.length} drafted ${plural(draft.changes.length, 'change was', 'changes were')} ` +
            'dropped; the proposal equals the base configuration.'
          : 'No changes are proposed; the proposal equals the base configuration.',
    });
  }

  const { confidence } = scoreConfidence({
    findings,
    shownSignals,
    shownExecutions,
    weakEvidence: evidence.warnings.length > 0,
    allSignalsInWindow: options.allSignalsInWindow ?? shownSignals,
    drops: drops.length,
  });

  return {
    diagnosis: { summary: draft.diagnosis.summary, findings },
    changes,
    structuredWarnings,
    confidence,
    analyzedSignalIds: shownSignals.map((signal) => signal.id),
    analyzedExecutionIds: shownExecutions.map((execution) => execution.id),
    proposedSlots: baseConfiguration.slots.map((slot) => ({
      ...structuredClone(slot),
      settings: structuredClone(settingsBySlot.get(slot.id) ?? slot.settings),
    })),
  };
}
