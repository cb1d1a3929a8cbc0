/** The drop rule for a draft's warnings: links to changes the proposal does not keep are removed. */
import type { StructuredWarning } from '../../core/schemas/runs.ts';
import { type DropRule, listOf, plural } from './rule.ts';

export interface WarningContext {
  /** The ids of the changes the proposal keeps. */
  readonly keptChangeIds: ReadonlySet<string>;
}

export type WarningRule = DropRule<StructuredWarning, WarningContext>;

/** Change ids of a warning that name no kept change: unlinked, the warning kept. */
export const droppedChangeReference: WarningRule = {
  type: 'dropped_change_reference',
  judge(warning, { keptChangeIds }) {
    const named = [...new Set(warning.changeIds ?? [])];
    const kept = named.filter((id) => keptChangeIds.has(id));
    const gone = named.filter((id) => !keptChangeIds.has(id));
    const keep =
      kept.length > 0
        ? { type: warning.type, message: warning.message, changeIds: kept }
        : { type: warning.type, message: warning.message };
    if (gone.length === 0) return { keep };
    return {
      keep,
      warning:
        `Warning "${warning.type}" named ${listOf(gone, (id) => `change ${id}`)}, which ` +
        `${plural(gone.length, 'is', 'are')} not in the proposal; ` +
        `${plural(gone.length, 'the reference was', 'those references were')} dropped.`,
    };
  },
};

export const WARNING_RULES: readonly WarningRule[] = [droppedChangeReference];
