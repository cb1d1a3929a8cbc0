/**
 * Which slot a rule's change patches: the finding's own slot when it fits, else the fitting slot
 * nearest to it in the configuration, a guess when there were several to choose from.
 */
import type { Slot } from '../../core/schemas/pipelines.ts';
import type { Action, FaultEvidence } from './rule.ts';

export type Target = { slot: Slot; slotGuess?: string };

export const hasKey = (slot: Slot, key: string): boolean => Object.hasOwn(slot.settings, key);

/** A model slot, or any slot that already has this setting. */
export const isModelLike = (key: string) => (slot: Slot) => slot.kind === 'model' || hasKey(slot, key);
/** A prompt slot, or any slot that has instructions. */
export const isPromptLike = (slot: Slot) => slot.kind === 'prompt' || hasKey(slot, 'instructions');

/** The slot an action patches: the evidence's own slot when it fits, else the fitting slot nearest to it. */
export function pickSlot(
  slots: readonly Slot[],
  evidenceSlot: Slot | undefined,
  fits: (slot: Slot) => boolean,
  kindLabel: string,
): Target | undefined {
  if (evidenceSlot !== undefined && fits(evidenceSlot)) return { slot: evidenceSlot };
  const candidates = slots.filter(fits);
  const [first] = candidates;
  if (first === undefined) return undefined;
  if (candidates.length === 1) return { slot: first };
  const at = evidenceSlot === undefined ? 0 : slots.indexOf(evidenceSlot);
  const nearest = candidates.reduce((best, slot) =>
    Math.abs(slots.indexOf(slot) - at) < Math.abs(slots.indexOf(best) - at) ? slot : best,
  );
  return {
    slot: nearest,
    slotGuess: `the evidence names no single ${kindLabel} slot; "${nearest.id}" is the nearest of ${candidates.length}`,
  };
}

/**
 * The slot that makes the failing call: timeouts and retries belong to whatever slot makes it, so
 * the finding's own slot unless it is a prompt slot without that setting; else a model slot.
 */
export function callingSlot(finding: FaultEvidence, slots: readonly Slot[], key: string): Target | undefined {
  const own = finding.slot;
  if (own !== undefined && (own.kind !== 'prompt' || hasKey(own, key))) return { slot: own };
  return pickSlot(slots, own, isModelLike(key), 'model');
}

/** The action `name` on the target, or none when no slot fits. */
export const actionOn = (name: string, target: Target | undefined, build: Action['build']): Action[] =>
  target === undefined ? [] : [{ name, ...target, build }];
