/**
 * The shape of a row of finalizeProposal's drop tables: a warning type and a small pure function
 * that keeps one part of a draft (perhaps citing less) or drops it, and says what it dropped.
 */
import type { StructuredWarning } from '../../core/schemas/runs.ts';

/** Warning types the code adds when it has to drop part of a draft: one per drop rule. */
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

/** What a rule makes of one part of the draft: kept, with a warning when it dropped a reference; or dropped. */
export type Ruling<T> = { keep: T; warning?: string } | { drop: string };

export interface DropRule<T, C> {
  /** The type of the warnings it writes. */
  readonly type: DropWarningType;
  readonly judge: (item: T, context: C) => Ruling<T>;
}

/** Passes `item` through `rules` in order, adding their warnings to `drops`; undefined once one drops it. */
export function review<T, C>(
  item: T,
  rules: readonly DropRule<T, C>[],
  context: C,
  drops: StructuredWarning[],
): T | undefined {
  let current = item;
  for (const rule of rules) {
    const ruling = rule.judge(current, context);
    if ('drop' in ruling) {
      drops.push({ type: rule.type, message: ruling.drop });
      return undefined;
    }
    if (ruling.warning !== undefined) drops.push({ type: rule.type, message: ruling.warning });
    current = ruling.keep;
  }
  return current;
}

/** The items that pass every rule, in order. */
export function keptBy<T, C>(
  items: readonly T[],
  rules: readonly DropRule<T, C>[],
  context: C,
  drops: StructuredWarning[],
): T[] {
  const kept: T[] = [];
  for (const item of items) {
    const passed = review(item, rules, context, drops);
    if (passed !== undefined) kept.push(passed);
  }
  return kept;
}

export const listOf = (
  items: readonly (string | number)[],
  render: (item: string | number) => string,
): string => items.map(render).join(', ');
export const plural = (count: number, one: string, many: string): string => (count === 1 ? one : many);
