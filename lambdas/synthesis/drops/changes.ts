/**
 * The drop rules for a draft's changes: a change must target a slot of the base configuration,
 * rest on a finding of the diagnosis, and carry a patch that applies, keeps the settings valid
 * and changes something.
 */
import { isDeepStrictEqual } from 'node:util';
import { slotSettingsSchema } from '../../core/schemas/pipelines.ts';
import type { DraftChange } from '../draft.ts';
import { applyMergePatch, type JsonObject, mergePatchRefusal } from '../merge-patch.ts';
import { type DropRule, listOf, plural } from './rule.ts';

/** A drafted change, the findings it still cites, and its slot's settings before and after its patch. */
export interface ChangeUnderReview {
  readonly draft: DraftChange;
  /** The finding ids it cites, once each; unknown ones are dropped by the rules. */
  readonly findingIds: string[];
  /** Its slot's settings as the changes kept before it left them. */
  readonly before: JsonObject;
  /** `before` with its patch applied, once the patch is known to apply. */
  readonly after: JsonObject;
}

export interface ChangeContext {
  /** The ids of the findings the proposal keeps. */
  readonly findingIds: ReadonlySet<string>;
  /** Each slot's settings as the changes kept so far left them. */
  readonly settingsBySlot: ReadonlyMap<string, JsonObject>;
}

export type ChangeRule = DropRule<ChangeUnderReview, ChangeContext>;

const ISSUE_SUMMARY_LENGTH = 300;

export function underReview(draft: DraftChange, settingsBySlot: ReadonlyMap<string, JsonObject>) {
  // A slot the base does not have has no settings: unknownSlot drops its change before any rule reads them.
  const before = settingsBySlot.get(draft.slotId) ?? {};
  return { draft, findingIds: [...new Set(draft.findingIds)], before, after: before };
}

/** A change on a slot the base configuration does not have: nothing to patch, so it is dropped. */
export const unknownSlot: ChangeRule = {
  type: 'unknown_slot',
  judge(change, { settingsBySlot }) {
    if (settingsBySlot.has(change.draft.slotId)) return { keep: change };
    return {
      drop:
        `Change ${change.draft.id} was dropped: it targets slot "${change.draft.slotId}", which is not in ` +
        'the base configuration.',
    };
  },
};

/** A change that cites no finding of the diagnosis: every change must rest on one, so it is dropped. */
export const uncitedChange: ChangeRule = {
  type: 'uncited_change',
  judge(change, { findingIds }) {
    if (change.findingIds.some((id) => findingIds.has(id))) return { keep: change };
    const named = change.findingIds;
    return {
      drop:
        `Change ${change.draft.id} was dropped: it cites no finding of the diagnosis` +
        (named.length > 0 ? ` (it named ${listOf(named, (id) => `finding ${id}`)}).` : '.'),
    };
  },
};

/** Finding ids the diagnosis does not contain, in a change that cites one it does: the ids are dropped. */
export const unknownFinding: ChangeRule = {
  type: 'unknown_finding',
  judge(change, { findingIds }) {
    const known = change.findingIds.filter((id) => findingIds.has(id));
    const unknown = change.findingIds.filter((id) => !findingIds.has(id));
    const keep = { ...change, findingIds: known };
    if (unknown.length === 0) return { keep };
    return {
      keep,
      warning:
        `Change ${change.draft.id} cited ${listOf(unknown, (id) => `finding ${id}`)}, which the diagnosis does ` +
        `not contain; ${plural(unknown.length, 'the reference was', 'those references were')} dropped.`,
    };
  },
};

/** A patch that cannot be applied, or that would make the slot's settings invalid: the change is dropped. */
export const invalidPatch: ChangeRule = {
  type: 'invalid_patch',
  judge(change) {
    const { id, slotId, patch } = change.draft;
    const refusal = mergePatchRefusal(patch);
    if (refusal !== undefined) return { drop: `Change ${id} was dropped: ${refusal}.` };
    const after = applyMergePatch(change.before, patch);
    const checked = slotSettingsSchema.safeParse(after);
    if (checked.success) return { keep: { ...change, after } };
    const issues = checked.error.issues
      .map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : 'settings'}: ${issue.message}`)
      .join('; ')
      .slice(0, ISSUE_SUMMARY_LENGTH);
    return {
      drop: `Change ${id} was dropped: its patch would make the settings of slot "${slotId}" invalid (${issues}).`,
    };
  },
};

/** A patch that leaves the slot's settings as they were: nothing to review, so the change is dropped. */
export const noOpChange: ChangeRule = {
  type: 'no_op_change',
  judge(change) {
    if (!isDeepStrictEqual(change.after, change.before)) return { keep: change };
    return {
      drop: `Change ${change.draft.id} was dropped: its patch leaves the settings of slot "${change.draft.slotId}" unchanged.`,
    };
  },
};

/** In order: the first rule that drops a change names the reason; later rules read what earlier ones kept. */
export const CHANGE_RULES: readonly ChangeRule[] = [
  unknownSlot,
  uncitedChange,
  unknownFinding,
  invalidPatch,
  noOpChange,
];
