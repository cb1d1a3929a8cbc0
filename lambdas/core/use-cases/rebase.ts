/*
 * Choosing an approval's changes and rebasing them: the changes a reviewer names, their patches
 * applied to a configuration, and the settings a rebase onto the active configuration cannot carry.
 */
import { applyMergePatch } from '../../synthesis/merge-patch.ts';
import { ValidationError } from '../errors.ts';
import type { Configuration, Slot } from '../schemas/pipelines.ts';
import type { Change, SynthesisRun } from '../schemas/runs.ts';

/** The run's changes named by `changeIds` (all when absent), in the run's order; a 400 for an unknown id. */
export function chooseChanges(run: SynthesisRun, changeIds: string[] | undefined): Change[] {
  if (changeIds === undefined) return run.changes;
  const known = new Set(run.changes.map((change) => change.id));
  const unknown = changeIds.filter((id) => !known.has(id));
  if (unknown.length > 0) {
    throw new ValidationError(
      `The run has no change ${unknown.join(', ')}; its changes are ${[...known].join(', ') || 'none'}.`,
      { details: [{ path: 'changeIds', message: `unknown change ids: ${unknown.join(', ')}` }] },
    );
  }
  const chosen = new Set(changeIds);
  return run.changes.filter((change) => chosen.has(change.id));
}

/** A settings key a rebase cannot carry over: it moved elsewhere in the active configuration. */
export interface RebaseConflict {
  slotId: string;
  key: string;
  base: unknown;
  active: unknown;
  proposed: unknown;
}

const sameValue = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/** The chosen changes' patches applied, in the run's order, to a configuration's slots. */
export function applyChanges(slots: Slot[], changes: Change[]): Slot[] {
  return slots.map((slot) => {
    let settings = slot.settings;
    for (const change of changes) {
      if (change.slotId === slot.id) settings = applyMergePatch(settings, change.patch) as Slot['settings'];
    }
    return { ...slot, settings };
  });
}

/**
 * The keys a rebase onto `active` would overwrite although they moved since `base`: for every
 * top-level key a chosen patch sets, the active value must equal the base's or already the
 * proposed one, and the slot must still exist.
 */
export function rebaseConflicts(
  base: Configuration,
  active: Configuration,
  changes: Change[],
): RebaseConflict[] {
  const proposedSlots = new Map(applyChanges(base.slots, changes).map((slot) => [slot.id, slot]));
  const baseSlots = new Map(base.slots.map((slot) => [slot.id, slot]));
  const activeSlots = new Map(active.slots.map((slot) => [slot.id, slot]));
  const seen = new Set<string>();
  const conflicts: RebaseConflict[] = [];
  for (const change of changes) {
    for (const key of Object.keys(change.patch)) {
      const where = `${change.slotId}\u0000${key}`;
      if (seen.has(where)) continue;
      seen.add(where);
      const was = baseSlots.get(change.slotId)?.settings[key] ?? null;
      const proposed = proposedSlots.get(change.slotId)?.settings[key] ?? null;
      const activeSlot = activeSlots.get(change.slotId);
      const now = activeSlot?.settings[key] ?? null;
      if (activeSlot && (sameValue(now, was) || sameValue(now, proposed))) continue;
      conflicts.push({ slotId: change.slotId, key, base: was, active: activeSlot ? now : null, proposed });
    }
  }
  return conflicts;
}

/** A conflict in words: the key, what it was in the base, is now and would become. */
export function describeConflict(conflict: RebaseConflict): string {
  const show = (value: unknown) => JSON.stringify(value);
  return `${conflict.slotId}.${conflict.key} was ${show(conflict.base)} in the run's base, is ${show(conflict.active)} now and would become ${show(conflict.proposed)}`;
}
