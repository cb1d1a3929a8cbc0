/**
 * Builds heuristic-v1's changes from its findings: each rule's actions in turn, against the settings
 * as changed so far; one change per action and slot, cited by every finding that asks for it.
 */
import type { Slot } from '../../core/schemas/pipelines.ts';
import type { DraftChange } from '../draft.ts';
import { applyMergePatch, type JsonObject } from '../merge-patch.ts';
import type { Finding } from './detect.ts';

export interface ChangePlan {
  changes: DraftChange[];
  /** The changes that are guesses, and why. */
  guesses: { changeId: string; reason: string }[];
  /** Per finding no change addresses: why not. */
  unaddressed: string[];
  /** Per finding whose change another finding's change rules out: why. */
  conflicts: string[];
}

/** The changes answering `findings` (finding n has id "n"). */
export function planChanges(findings: readonly Finding[], slots: readonly Slot[]): ChangePlan {
  const raised = new Set(
    findings.flatMap(({ rule, evidence }) => {
      const raise = rule.raises?.(evidence, slots);
      return raise === undefined ? [] : [`${raise.setting}|${raise.slotId}`];
    }),
  );
  const scope = { slots, isRaised: (setting: string, slotId: string) => raised.has(`${setting}|${slotId}`) };

  /** The settings of each slot as the changes so far leave them. */
  const working = new Map<string, JsonObject>();
  const plan: ChangePlan = { changes: [], guesses: [], unaddressed: [], conflicts: [] };
  const changeByAction = new Map<string, DraftChange>();

  findings.forEach(({ rule, evidence }, index) => {
    const findingId = String(index + 1);
    const skipped: string[] = [];
    let addressed = false;
    for (const action of rule.answer(evidence, scope)) {
      const actionKey = `${action.name}|${action.slot.id}`;
      const existing = changeByAction.get(actionKey);
      if (existing !== undefined) {
        // Another finding already asked for this very change; citing it twice beats patching twice.
        if (!existing.findingIds.includes(findingId)) existing.findingIds.push(findingId);
        addressed = true;
        continue;
      }
      const settings = working.get(action.slot.id) ?? action.slot.settings;
      const result = action.build(settings);
      if ('skip' in result) {
        const reason = `slot "${action.slot.id}": ${result.skip}`;
        if (result.conflict === true) plan.conflicts.push(`Finding ${findingId}: ${reason}.`);
        else skipped.push(reason);
        continue;
      }
      const change: DraftChange = {
        id: String(plan.changes.length + 1),
        slotId: action.slot.id,
        description: `Slot "${action.slot.id}": ${result.description}`,
        rationale: result.rationale,
        findingIds: [findingId],
        patch: result.patch,
      };
      plan.changes.push(change);
      changeByAction.set(actionKey, change);
      working.set(action.slot.id, applyMergePatch(settings, result.patch));
      const reasons = [action.slotGuess, result.guess].filter((reason) => reason !== undefined);
      if (reasons.length > 0) plan.guesses.push({ changeId: change.id, reason: reasons.join('; ') });
      addressed = true;
    }
    if (!addressed) {
      plan.unaddressed.push(
        `Finding ${findingId}: ${skipped.length > 0 ? skipped.join('; ') : 'no slot of this configuration can take a fix for it'}.`,
      );
    }
  });
  return plan;
}
