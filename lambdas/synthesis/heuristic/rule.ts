/**
 * The shape of a row of heuristic-v1's rule table: a fault, how it is recognised in the evidence,
 * and the changes that answer a finding of it. Also the evidence a rule reads and returns.
 */

import type { Slot } from '../../core/schemas/pipelines.ts';
import type { Execution, Signal } from '../../core/schemas/records.ts';
import type { JsonObject } from '../merge-patch.ts';

export type Fault = 'truncation' | 'timeout' | 'format' | 'transient' | 'latency' | 'quality' | 'error';

/** How the runs of one slot went (or, for runs failing in no slot, of the pipeline as a whole). */
export interface SlotRuns {
  runs: number;
  durations: number[];
  /** The runs that failed, per fault. */
  failedRuns: Map<Fault, Execution[]>;
  /** The runs behind `durations`, in the same order. */
  timedRuns: Execution[];
}

/** The evidence window as the rules read it: each signal and run failure already named by its fault. */
export interface FaultWindow {
  /** The base configuration's slots, in order. */
  slots: readonly Slot[];
  /** The signals that show a fault, in window order, with their slot (undefined: none named). */
  signals: readonly { signal: Signal; fault: Fault; slot: Slot | undefined }[];
  /** Per slot of the configuration that ran: how its runs went. */
  runsBySlot: ReadonlyMap<string, SlotRuns>;
  /** Failed runs in which no slot of the configuration failed; `runs` counts every run. */
  unattributedRuns: SlotRuns;
}

/** One finding: a fault in one slot (or in none named) and the evidence that shows it. */
export interface FaultEvidence {
  slot: Slot | undefined;
  signals: Signal[];
  runFailures: number;
  runs: number;
  p90Ms: number | undefined;
  latencySamples: number;
  /** The runs the finding cites: those that failed this way, or that were slow in its slot. */
  executions: Execution[];
}

/** A change to one setting, ready to patch. */
export interface Proposed {
  patch: JsonObject;
  description: string;
  rationale: string;
  /** Why the change is a guess, if it is one. */
  guess?: string;
}
/** Why no change was made; `conflict` when another finding's change stands in the way. */
export interface Skipped {
  skip: string;
  conflict?: boolean;
}
/** A change a rule asks for on one slot; built against that slot's settings as changed so far. */
export interface Action {
  /** Two findings asking for the same action on the same slot share one change. */
  name: string;
  slot: Slot;
  /** Set when the evidence named no single fitting slot and this one was picked. */
  slotGuess?: string;
  build(settings: JsonObject): Proposed | Skipped;
}

/** What a rule's answer may look at beyond its own finding. */
export interface AnswerScope {
  slots: readonly Slot[];
  /** Whether another finding's change raises `setting` on the slot, so it must not be lowered. */
  isRaised(setting: string, slotId: string): boolean;
}

export interface FaultRule {
  fault: Fault;
  /** The title of its findings. */
  label: string;
  /** Recognises the fault in a signal's kind and message or in a run's error, lower-cased. */
  pattern: RegExp;
  /** Info signals are context, not faults, unless their value shows the fault (a slow reading, a low score). */
  infoValueShowsFault?(value: number): boolean;
  /** The findings of this fault in the window: at most one per slot, plus one naming no slot. */
  detect(window: FaultWindow): FaultEvidence[];
  /** What its signals' values say, for the finding's description (a p90, a mean score). */
  describeReadings?(readings: readonly number[]): string;
  /** The setting its answer raises on a slot, which no other finding may lower there. */
  raises?(finding: FaultEvidence, slots: readonly Slot[]): { setting: string; slotId: string } | undefined;
  /** The changes that answer one of its findings, in the order they are tried. */
  answer(finding: FaultEvidence, scope: AnswerScope): Action[];
}
