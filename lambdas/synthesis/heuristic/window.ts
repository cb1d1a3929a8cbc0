/**
 * Reads the evidence window for heuristic-v1's rules: names the fault of every signal and failed
 * run by the first rule whose pattern matches, and counts each slot's runs, durations and failures.
 */
import type { SynthesisContext } from '../../core/ports/synthesis.ts';
import type { Slot } from '../../core/schemas/pipelines.ts';
import type { Execution, Signal } from '../../core/schemas/records.ts';
import type { Fault, FaultRule, FaultWindow, SlotRuns } from './rule.ts';

/** The fault of the first rule whose pattern matches: the table's order decides, so "timed out" is never an "error". */
export function classify(rules: readonly FaultRule[], kind: string, message: string): Fault | undefined {
  const text = `${kind} ${message}`.toLowerCase();
  return rules.find((rule) => rule.pattern.test(text))?.fault;
}

/** Warning and critical signals of a recognised fault always count; info signals only when their rule says so. */
function showsFault(signal: Signal, rule: FaultRule | undefined): boolean {
  if (signal.severity !== 'info') return true;
  if (signal.value === undefined) return false;
  return rule?.infoValueShowsFault?.(signal.value) === true;
}

const emptySlotRuns = (runs = 0): SlotRuns => ({
  runs,
  durations: [],
  failedRuns: new Map(),
  timedRuns: [],
});

const countFailure = (stats: SlotRuns, fault: Fault, execution: Execution): void => {
  stats.failedRuns.set(fault, [...(stats.failedRuns.get(fault) ?? []), execution]);
};

/** Per slot: how often it ran, how long it took and how it failed; plus run failures naming no failed slot. */
function summarizeRuns(
  rules: readonly FaultRule[],
  executions: readonly Execution[],
  slotsById: ReadonlyMap<string, Slot>,
): Pick<FaultWindow, 'runsBySlot' | 'unattributedRuns'> {
  const runsBySlot = new Map<string, SlotRuns>();
  const unattributedRuns = emptySlotRuns(executions.length);
  const faultOf = (error: string | undefined): Fault => classify(rules, '', error ?? '') ?? 'error';
  for (const execution of executions) {
    let failedInSlot = false;
    for (const result of execution.slotResults ?? []) {
      if (!slotsById.has(result.slotId)) continue;
      const stats = runsBySlot.get(result.slotId) ?? emptySlotRuns();
      runsBySlot.set(result.slotId, stats);
      stats.runs += 1;
      stats.durations.push(result.durationMs);
      stats.timedRuns.push(execution);
      if (result.status === 'failed') {
        failedInSlot = true;
        countFailure(stats, faultOf(result.error), execution);
      }
    }
    if (execution.status === 'failed' && !failedInSlot) {
      countFailure(unattributedRuns, faultOf(execution.error), execution);
    }
  }
  return { runsBySlot, unattributedRuns };
}

/** The window as the rules read it, and the slots its signals name that the configuration no longer has. */
export function readWindow(
  context: SynthesisContext,
  rules: readonly FaultRule[],
): { window: FaultWindow; staleSlotIds: string[] } {
  const slots = context.baseConfiguration.slots;
  const slotsById = new Map(slots.map((slot) => [slot.id, slot]));
  const staleSlotIds = new Set<string>();
  const signals: FaultWindow['signals'][number][] = [];
  for (const signal of context.signals) {
    // Stryker disable next-line ConditionalExpression: no slot has an undefined id, so the lookup gives undefined too.
    const slot = signal.slotId === undefined ? undefined : slotsById.get(signal.slotId);
    if (signal.slotId !== undefined && slot === undefined) {
      // It names a slot this configuration no longer has: nothing here could fix it.
      staleSlotIds.add(signal.slotId);
      continue;
    }
    const fault =
      classify(rules, signal.kind, signal.message) ?? (signal.severity === 'critical' ? 'error' : undefined);
    if (fault === undefined) continue;
    if (
      showsFault(
        signal,
        rules.find((rule) => rule.fault === fault),
      )
    )
      signals.push({ signal, fault, slot });
  }
  return {
    window: { slots, signals, ...summarizeRuns(rules, context.executions, slotsById) },
    staleSlotIds: [...staleSlotIds].sort(),
  };
}
