/**
 * Which evidence belongs to the configuration in force: a signal recorded before the base
 * configuration became active (and citing no run of it), or a run of another configuration, is
 * about an earlier configuration. Such evidence alone never justifies changing a setting that the
 * last activation changed: the change it asked for may be exactly that one. Shared by every handler.
 */
import type { SynthesisContext } from '../../core/ports/synthesis.ts';
import type { Configuration } from '../../core/schemas/pipelines.ts';
import type { Execution, Signal } from '../../core/schemas/records.ts';

export interface ConfigurationInForce {
  /** True when the record was made under an earlier configuration. */
  signalIsEarlier(signal: Signal): boolean;
  executionIsEarlier(execution: Execution): boolean;
  /** The settings keys per slot that the last activation changed (empty when unknown). */
  changedKeys(slotId: string): ReadonlySet<string>;
  /** E.g. "version 2, active since 2026-11-24T10:00Z", for text. */
  label: string;
  activeSince: string | null;
}

function changedSettings(
  previous: Configuration | null | undefined,
  base: Configuration,
): Map<string, Set<string>> {
  const changed = new Map<string, Set<string>>();
  if (!previous) return changed;
  const before = new Map(previous.slots.map((slot) => [slot.id, slot.settings]));
  for (const slot of base.slots) {
    const was = before.get(slot.id) ?? {};
    const keys = new Set([...Object.keys(was), ...Object.keys(slot.settings)]);
    const moved = [...keys].filter(
      (key) => JSON.stringify(was[key] ?? null) !== JSON.stringify(slot.settings[key] ?? null),
    );
    if (moved.length > 0) changed.set(slot.id, new Set(moved));
  }
  return changed;
}

const NONE: ReadonlySet<string> = new Set();

/** How the context's evidence relates to its base configuration. */
export function configurationInForce(context: SynthesisContext): ConfigurationInForce {
  const base = context.baseConfiguration;
  const activeSince = context.activeSince ?? null;
  const onBase = new Set(
    context.executions
      .filter((execution) => execution.configurationId === base.id)
      .map((execution) => execution.id),
  );
  const changed = changedSettings(context.previousConfiguration, base);
  return {
    activeSince,
    label: `version ${base.version}${activeSince ? `, active since ${activeSince.slice(0, 16)}Z` : ''}`,
    signalIsEarlier: (signal) =>
      activeSince !== null &&
      signal.occurredAt < activeSince &&
      (signal.executionId === undefined || !onBase.has(signal.executionId)),
    executionIsEarlier: (execution) => execution.configurationId !== base.id,
    changedKeys: (slotId) => changed.get(slotId) ?? NONE,
  };
}
