/*
 * The maintained measure of an approval's effect (effect.ts counts it): per arm, the
 * newest ≤ 1,000 executions recorded in its window, each reduced to what the figures need (failed,
 * duration, the touched slots' results, the signals citing it), and a recording mark. A fresh
 * measurement merges only what was recorded after the mark, drops the oldest beyond 1,000 and
 * counts again in memory (measureEffect). Pure: the use case reads, the store keeps it.
 */
import type { Execution, Severity, Signal } from '../schemas/records.ts';
import { EFFECT_ARM_LIMIT, type EffectFigures, measureEffect } from './effect.ts';

/** Which executions of a configuration an arm counts: by recording time, and by start time. */
export interface ArmWindow {
  configurationId: string;
  /** Recorded at or after (ISO time). */
  recordedFrom?: string | undefined;
  /** Recorded before (ISO time). */
  recordedBefore?: string | undefined;
  /** Started at or after. */
  startedFrom?: string | undefined;
  /** Started before. */
  startedBefore?: string | undefined;
}

/** A signal as an arm keeps it (the severity counts; the time for the signal retention window). */
export interface KeptSignal {
  id: string;
  severity: Severity;
  occurredAt: string;
}

/** An execution as an arm keeps it. `key` is its recording key (`<recordedAt>#<id>`, gsi2). */
export interface KeptExecution {
  key: string;
  id: string;
  startedAt: string;
  failed: boolean;
  durationMs: number;
  /** Its results in the touched slots (`slot` indexes EffectState.slotIds). */
  slots: Array<{ slot: number; failed: boolean; durationMs: number }>;
  signals: KeptSignal[];
}

export interface KeptArm {
  window: ArmWindow;
  /**
   * Every execution of the window recorded with a key ≤ mark has been merged (see SETTLE_MS);
   * the next measurement reads only keys after it.
   */
  mark: string;
  /** Oldest first by key, at most EFFECT_ARM_LIMIT. */
  executions: KeptExecution[];
}

/** A signal citing an execution no arm holds (yet): it may be recorded before the execution. */
export interface KeptOrphan extends KeptSignal {
  executionId: string;
}

export interface EffectState {
  /** When it was built from scratch (a rebuild every REBUILD_AFTER_MS is the backstop). */
  builtAt: string;
  slotIds: string[];
  base: KeptArm;
  applied: KeptArm;
  /** Signals citing an execution, recorded at or after this time, are counted. */
  signalsFrom: string;
  /** Every citing signal recorded with a key ≤ signalMark has been merged. */
  signalMark: string;
  /** The newest ORPHAN_LIMIT citing signals whose execution no arm holds. */
  orphans: KeptOrphan[];
}

/** An execution read from the recording index, with its key. */
export interface RecordedExecution {
  key: string;
  execution: Pick<Execution, 'id' | 'status' | 'durationMs' | 'startedAt' | 'slotResults'>;
}

/** A signal citing an execution, read from the recording index, with its key. */
export interface RecordedSignal {
  key: string;
  signal: Pick<Signal, 'id' | 'severity' | 'occurredAt'> & { executionId: string };
}

/**
 * How long after its recording time an execution or signal may still become visible to a Query
 * (the write's own latency and index propagation): marks stay this far behind the reader's clock,
 * so what lies between is read again (and recognized by id) rather than missed.
 */
export const SETTLE_MS = 2_000;
/** A maintained state older than this is rebuilt from scratch: the backstop for a write later than SETTLE_MS. */
export const REBUILD_AFTER_MS = 3_600_000;
/** At most this many orphan signals are kept (the newest; ≤ ~85 KB with 64-character ids). */
export const ORPHAN_LIMIT = 500;

/** The key every recording key of time `at` sorts after (`<iso>#…` > `<iso>`). */
export const keyBefore = (at: string) => at;

const byKey = (a: { key: string }, b: { key: string }) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

/** `sorted` (by key) with `more` merged in, in key order: linear in the kept ones. */
export function mergeByKey<T extends { key: string }>(sorted: T[], more: T[]): T[] {
  const added = [...more].sort(byKey);
  const merged: T[] = [];
  let i = 0;
  let j = 0;
  while (i < sorted.length || j < added.length) {
    const next = j >= added.length || (i < sorted.length && (sorted[i] as T).key <= (added[j] as T).key);
    merged.push(next ? (sorted[i++] as T) : (added[j++] as T));
  }
  return merged;
}

function keptExecution(recorded: RecordedExecution, slotIds: string[]): KeptExecution {
  const { execution } = recorded;
  const slots: KeptExecution['slots'] = [];
  for (const result of execution.slotResults ?? []) {
    const slot = slotIds.indexOf(result.slotId);
    if (slot >= 0) slots.push({ slot, failed: result.status === 'failed', durationMs: result.durationMs });
  }
  return {
    key: recorded.key,
    id: execution.id,
    startedAt: execution.startedAt,
    failed: execution.status === 'failed',
    durationMs: execution.durationMs,
    slots,
    signals: [],
  };
}

/** True when the execution belongs in the window (its recording key is checked by the Query). */
export function inWindow(window: ArmWindow, execution: { startedAt: string }): boolean {
  if (window.startedFrom !== undefined && execution.startedAt < window.startedFrom) return false;
  if (window.startedBefore !== undefined && execution.startedAt >= window.startedBefore) return false;
  return true;
}

/** True when nothing can be recorded in the arm's window any more after its mark. */
export function armClosed(arm: KeptArm): boolean {
  return arm.window.recordedBefore !== undefined && arm.mark >= arm.window.recordedBefore;
}

/** The mark a measurement made at `now` may set: SETTLE_MS behind, never backwards. */
export function nextMark(previous: string, now: Date): string {
  const settled = new Date(now.getTime() - SETTLE_MS).toISOString();
  return settled > previous ? settled : previous;
}

/** An empty arm whose first read takes everything of its window. */
export function emptyArm(window: ArmWindow): KeptArm {
  return { window, mark: window.recordedFrom ?? '', executions: [] };
}

export function emptyState(input: {
  now: Date;
  slotIds: string[];
  base: ArmWindow;
  applied: ArmWindow;
  signalsFrom: string;
}): EffectState {
  return {
    builtAt: input.now.toISOString(),
    slotIds: input.slotIds,
    base: emptyArm(input.base),
    applied: emptyArm(input.applied),
    signalsFrom: input.signalsFrom,
    signalMark: input.signalsFrom,
    orphans: [],
  };
}

/** True when a kept state measures exactly these windows and slots (else it is rebuilt). */
export function stateFits(
  state: EffectState,
  expected: { slotIds: string[]; base: ArmWindow; applied: ArmWindow; signalsFrom: string },
  now: Date,
): boolean {
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  return (
    now.getTime() - Date.parse(state.builtAt) < REBUILD_AFTER_MS &&
    same(state.slotIds, expected.slotIds) &&
    same(state.base.window, expected.base) &&
    same(state.applied.window, expected.applied) &&
    state.signalsFrom === expected.signalsFrom
  );
}

/**
 * Merges what was read after the marks (executions per arm, citing signals), newest first or in any
 * order, read at `now`; returns the new state and whether anything it counts changed.
 */
export function mergeRecorded(
  state: EffectState,
  read: { base: RecordedExecution[] | null; applied: RecordedExecution[] | null; signals: RecordedSignal[] },
  now: Date,
): { state: EffectState; changed: boolean } {
  let attached = false;
  let orphans = state.orphans;
  const mergeArm = (arm: KeptArm, recorded: RecordedExecution[] | null): KeptArm => {
    if (recorded === null) return arm;
    const known = new Set(arm.executions.map((execution) => execution.id));
    const added: KeptExecution[] = [];
    for (const item of recorded) {
      if (known.has(item.execution.id) || !inWindow(arm.window, item.execution)) continue;
      known.add(item.execution.id);
      added.push(keptExecution(item, state.slotIds));
    }
    let executions = arm.executions;
    if (added.length > 0) {
      // Signals recorded before their execution wait among the orphans. The orphan list is
      // renewed whenever executions arrive, which is what marks the merge as a change.
      const byId = new Map(added.map((execution) => [execution.id, execution]));
      const still: KeptOrphan[] = [];
      for (const { executionId, ...signal } of orphans) {
        const holder = byId.get(executionId);
        if (holder) holder.signals.push(signal);
        else still.push({ ...signal, executionId });
      }
      orphans = still;
      executions = mergeByKey(arm.executions, added).slice(-EFFECT_ARM_LIMIT);
    }
    return { ...arm, executions, mark: nextMark(arm.mark, now) };
  };
  const base = mergeArm(state.base, read.base);
  const applied = mergeArm(state.applied, read.applied);

  const holders = new Map<string, KeptExecution>();
  for (const execution of [...base.executions, ...applied.executions]) holders.set(execution.id, execution);
  const orphanIds = new Set(orphans.map((orphan) => orphan.id));
  const newOrphans: KeptOrphan[] = [];
  // Oldest first, so the orphans kept are the newest.
  const signals = [...read.signals].sort(byKey);
  for (const { key, signal } of signals) {
    if (key < state.signalsFrom) continue;
    const kept: KeptSignal = { id: signal.id, severity: signal.severity, occurredAt: signal.occurredAt };
    const holder = holders.get(signal.executionId);
    if (holder) {
      if (holder.signals.some((known) => known.id === signal.id)) continue;
      holder.signals.push(kept);
      attached = true;
    } else if (!orphanIds.has(signal.id)) {
      orphanIds.add(signal.id);
      newOrphans.push({ ...kept, executionId: signal.executionId });
    }
  }
  if (newOrphans.length > 0) orphans = [...orphans, ...newOrphans].slice(-ORPHAN_LIMIT);
  return {
    state: {
      ...state,
      base,
      applied,
      orphans,
      signalMark: nextMark(state.signalMark, now),
    },
    // Executions arrived, a signal was attached, or the orphans were handed over or grew.
    changed: attached || orphans !== state.orphans,
  };
}

/** Where the team's retention windows begin: records older are not counted. */
export interface RetentionSince {
  signals: string;
  executions: string;
}

/** The effect's figures from a maintained state, within the retention windows. */
export function figuresOfState(
  state: EffectState,
  since: RetentionSince,
  minExecutions: number,
): EffectFigures {
  const severities: Array<{ executionId: string; severity: Severity }> = [];
  const executionsOf = (arm: KeptArm) =>
    arm.executions
      .filter((execution) => execution.startedAt >= since.executions)
      .map((execution) => {
        for (const signal of execution.signals) {
          if (signal.occurredAt >= since.signals) {
            severities.push({ executionId: execution.id, severity: signal.severity });
          }
        }
        return {
          id: execution.id,
          status: execution.failed ? ('failed' as const) : ('succeeded' as const),
          durationMs: execution.durationMs,
          startedAt: execution.startedAt,
          slotResults: execution.slots.map((result) => ({
            slotId: state.slotIds[result.slot] as string,
            status: result.failed ? ('failed' as const) : ('succeeded' as const),
            durationMs: result.durationMs,
          })),
        };
      });
  const base = executionsOf(state.base);
  const applied = executionsOf(state.applied);
  return measureEffect({ base, applied, signals: severities, slotIds: state.slotIds, minExecutions });
}
