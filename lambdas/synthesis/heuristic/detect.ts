/**
 * Detection shared by heuristic-v1's rules: gathering one fault's evidence per slot from the window,
 * the p90 a slot's runs took, and the order findings are reported in (strongest first).
 */
import type { Slot } from '../../core/schemas/pipelines.ts';
import { percentile } from '../evidence/executions.ts';
import { severityRank } from '../evidence/signals.ts';
import { HEURISTIC_V1_LIMITS as L } from './limits.ts';
import type { Fault, FaultEvidence, FaultRule, FaultWindow, SlotRuns } from './rule.ts';

/** A rule's finding, as the engine reports it. */
export interface Finding {
  rule: FaultRule;
  evidence: FaultEvidence;
}

/**
 * Called for each slot of the configuration that ran, after its run failures were attached:
 * `found` is the slot's evidence so far, `open` creates it.
 */
export type SlotRunsHook = (
  stats: SlotRuns,
  found: FaultEvidence | undefined,
  open: () => FaultEvidence,
) => void;

/** A finding's evidence before anything is attached to it. */
export const noEvidence = (slot: Slot | undefined): FaultEvidence => ({
  slot,
  signals: [],
  runFailures: 0,
  runs: 0,
  p90Ms: undefined,
  latencySamples: 0,
  executions: [],
});

/**
 * One fault's evidence per slot: its signals, and the runs that failed this way when they are
 * concentrated enough to stand alone (or back a finding its signals opened).
 */
export function collectFaultEvidence(
  window: FaultWindow,
  fault: Fault,
  onSlotRuns?: SlotRunsHook,
): FaultEvidence[] {
  const found = new Map<Slot | undefined, FaultEvidence>();
  const open = (slot: Slot | undefined): FaultEvidence => {
    let evidence = found.get(slot);
    if (evidence === undefined) {
      evidence = noEvidence(slot);
      found.set(slot, evidence);
    }
    return evidence;
  };
  for (const entry of window.signals) if (entry.fault === fault) open(entry.slot).signals.push(entry.signal);

  const attachRuns = (slot: Slot | undefined, stats: SlotRuns): void => {
    const failedRuns = stats.failedRuns.get(fault) ?? [];
    const failures = failedRuns.length;
    if (failures === 0) return;
    const concentrated = failures >= L.minRunFailures && failures / stats.runs >= L.minRunFailureRate;
    if (!found.has(slot) && !concentrated) return;
    const evidence = open(slot);
    evidence.runFailures = failures;
    evidence.runs = stats.runs;
    evidence.executions = failedRuns;
  };
  for (const slot of window.slots) {
    const stats = window.runsBySlot.get(slot.id);
    if (stats === undefined) continue;
    attachRuns(slot, stats);
    onSlotRuns?.(stats, found.get(slot), () => open(slot));
  }
  attachRuns(undefined, window.unattributedRuns);
  return [...found.values()];
}

/** The p90 duration of a slot's runs, when enough of them were timed to tell. */
export function measuredP90(stats: SlotRuns): number | undefined {
  if (stats.durations.length < L.minLatencySamples) return undefined;
  return percentile(stats.durations, 0.9);
}

/** Every rule's findings, strongest first: by severity, then amount of evidence, then table and slot order. */
export function detectFindings(window: FaultWindow, rules: readonly FaultRule[]): Finding[] {
  const slotIndex = (slot: Slot | undefined): number =>
    slot === undefined ? Number.MAX_SAFE_INTEGER : window.slots.indexOf(slot);
  const rank = ({ evidence }: Finding): number =>
    Math.max(
      evidence.runFailures > 0 ? severityRank('warning') : 0,
      ...evidence.signals.map((signal) => severityRank(signal.severity)),
    );
  const weight = ({ evidence }: Finding): number => evidence.signals.length + evidence.runFailures;
  const ruleIndex = ({ rule }: Finding): number => rules.indexOf(rule);
  return rules
    .flatMap((rule) => rule.detect(window).map((evidence) => ({ rule, evidence })))
    .sort(
      (a, b) =>
        rank(b) - rank(a) ||
        weight(b) - weight(a) ||
        ruleIndex(a) - ruleIndex(b) ||
        slotIndex(a.evidence.slot) - slotIndex(b.evidence.slot),
    );
}
