/**
 * The signals a synthesis shows: repeats of one report counted once, the rest numbered [1], [2], …
 * most severe first, then newest. Shared by every handler, so their references mean the same.
 */
import type { Severity, Signal } from '../../core/schemas/records.ts';

/** How many distinct signals a synthesis shows and numbers. */
export const SHOWN_SIGNALS = 50;

const SEVERITY_RANK: Record<Severity, number> = { info: 0, warning: 1, critical: 2 };

/** How much a severity weighs: info 0, warning 1, critical 2. */
export const severityRank = (severity: Severity): number => SEVERITY_RANK[severity];

/** The key under which signals count as repeats of one another: same kind, slot and message. */
export function signalRepeatKey(signal: Pick<Signal, 'kind' | 'slotId' | 'message'>): string {
  return JSON.stringify([signal.kind, signal.slotId ?? null, signal.message]);
}

/** How many times each report (by signalRepeatKey) occurs among `signals`. */
export function countRepeats(signals: readonly Signal[]): Map<string, number> {
  const repeats = new Map<string, number>();
  for (const signal of signals) {
    const key = signalRepeatKey(signal);
    repeats.set(key, (repeats.get(key) ?? 0) + 1);
  }
  return repeats;
}

const timeOf = (signal: Signal): number => Date.parse(signal.occurredAt);

/** Most severe first, then most recent, then by id (ids are unique), so equal inputs always sort the same. */
function compareForShowing(a: Signal, b: Signal): number {
  return (
    severityRank(b.severity) - severityRank(a.severity) ||
    timeOf(b) - timeOf(a) ||
    // Stryker disable next-line EqualityOperator: ids are unique, so a.id never equals b.id.
    (a.id < b.id ? -1 : 1)
  );
}

/** The signals a synthesis shows, numbered from 1: one per kind, slot and message, most severe then newest. */
export function selectShownSignals(signals: readonly Signal[], limit: number = SHOWN_SIGNALS): Signal[] {
  const representative = new Map<string, Signal>();
  for (const signal of signals) {
    const key = signalRepeatKey(signal);
    const held = representative.get(key);
    // Stryker disable next-line EqualityOperator: two signals never compare equal, the id being the last tiebreak.
    if (held === undefined || compareForShowing(signal, held) < 0) representative.set(key, signal);
  }
  return [...representative.values()].sort(compareForShowing).slice(0, limit);
}
