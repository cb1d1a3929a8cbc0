/**
 * The references a draft cites: signal [n] is the n-th shown signal (any repeat of it maps there),
 * run [En] the n-th shown run. Lists of references come out distinct and in ascending order.
 */
import type { Execution, Signal } from '../../core/schemas/records.ts';
import { signalRepeatKey } from './signals.ts';

export interface Numbering {
  /** The refs of the shown signals that these signals are (or repeat); signals not shown have none. */
  signalRefs(signals: readonly Signal[]): number[];
  /** The refs of these runs among the shown ones, lowest (newest) first, at most `limit`. */
  executionRefs(executions: readonly Execution[], limit: number): number[];
}

const ascending = (refs: Iterable<number>): number[] => [...new Set(refs)].sort((a, b) => a - b);

/** Numbers the shown signals and runs from 1, in the order given. */
export function numberShown(
  shownSignals: readonly Signal[],
  shownExecutions: readonly Execution[],
): Numbering {
  const refByKey = new Map(shownSignals.map((signal, index) => [signalRepeatKey(signal), index + 1]));
  const refByExecution = new Map(shownExecutions.map((execution, index) => [execution, index + 1]));
  return {
    signalRefs: (signals) =>
      ascending(signals.flatMap((signal) => refByKey.get(signalRepeatKey(signal)) ?? [])),
    executionRefs: (executions, limit) =>
      ascending(executions.flatMap((execution) => refByExecution.get(execution) ?? [])).slice(0, limit),
  };
}
