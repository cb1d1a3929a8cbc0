/*
 * How a run's maintained effect state (core/rollouts/effect-state.ts) is kept in its items: compact
 * JSON (arrays instead of objects, the recording time in base 36), brotli-compressed into a binary
 * attribute (~90 bytes an execution as JSON, ~23 compressed: two full arms ~180 KB, ~46 KB kept).
 * A state whose JSON is over KEPT_STATE_BYTES is not kept (measured from scratch each time; see
 * docs/scaling.md). Kept strings of the JSON itself (before the compression) still read.
 */
// node:zlib loads when a kept effect is first written or read, not at every cold start of the
// functions that bundle this module without using it (its load showed in their init time).
const zlib = () => process.getBuiltinModule('node:zlib');

import {
  type ArmWindow,
  type EffectState,
  type KeptArm,
  type KeptExecution,
  type KeptOrphan,
  type KeptSignal,
  mergeByKey,
} from '../core/rollouts/effect-state.ts';
import type { Severity } from '../core/schemas/records.ts';

/** Quality 6 of 11: within a tenth of the smallest output at a fiftieth of the time (~6 ms for 180 KB). */
const BROTLI_QUALITY = 6;

/** The JSON as kept: brotli-compressed bytes (a DynamoDB binary attribute). */
function pack(json: string): Uint8Array {
  const { brotliCompressSync, constants } = zlib();
  return brotliCompressSync(json, { params: { [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY } });
}

/** The JSON of a kept value: compressed bytes, or the plain string that versions before kept. */
function unpack(kept: unknown): string | null {
  if (typeof kept === 'string') return kept;
  if (kept instanceof Uint8Array) return zlib().brotliDecompressSync(kept).toString('utf8');
  return null;
}

/** The largest encoded state kept: an item holds 400 KB with its effect, keys and attribute names. */
export const KEPT_STATE_BYTES = 380_000;

const SEVERITIES: Severity[] = ['info', 'warning', 'critical'];
const STATE_FORMAT = 1;

type EncodedSignals = Array<string | number>;
type EncodedExecution = [string, string, string, 0 | 1, number, number[]?, EncodedSignals?];

/** `<recordedAt>#<id>` → base-36 milliseconds (recordedAt is the server's ISO time). */
function encodeKey(key: string, id: string): string {
  const at = key.slice(0, key.length - id.length - 1);
  return Date.parse(at).toString(36);
}

function decodeKey(at36: string, id: string): string {
  return `${new Date(Number.parseInt(at36, 36)).toISOString()}#${id}`;
}

function encodeSignals(signals: KeptSignal[]): EncodedSignals {
  return signals.flatMap((signal) => [signal.id, SEVERITIES.indexOf(signal.severity), signal.occurredAt]);
}

function decodeSignals(encoded: EncodedSignals = []): KeptSignal[] {
  const signals: KeptSignal[] = [];
  for (let i = 0; i + 2 < encoded.length; i += 3) {
    signals.push({
      id: String(encoded[i]),
      severity: SEVERITIES[Number(encoded[i + 1])] ?? 'info',
      occurredAt: String(encoded[i + 2]),
    });
  }
  return signals;
}

function encodeExecution(execution: KeptExecution): EncodedExecution {
  const encoded: EncodedExecution = [
    encodeKey(execution.key, execution.id),
    execution.id,
    execution.startedAt,
    execution.failed ? 1 : 0,
    execution.durationMs,
  ];
  if (execution.slots.length > 0 || execution.signals.length > 0) {
    encoded.push(execution.slots.flatMap((slot) => [slot.slot, slot.failed ? 1 : 0, slot.durationMs]));
  }
  if (execution.signals.length > 0) encoded.push(encodeSignals(execution.signals));
  return encoded;
}

function decodeExecution([
  at36,
  id,
  startedAt,
  failed,
  durationMs,
  slots = [],
  signals,
]: EncodedExecution): KeptExecution {
  const decoded: KeptExecution['slots'] = [];
  for (let i = 0; i + 2 < slots.length; i += 3) {
    decoded.push({
      slot: slots[i] as number,
      failed: slots[i + 1] === 1,
      durationMs: slots[i + 2] as number,
    });
  }
  return {
    key: decodeKey(at36, id),
    id,
    startedAt,
    failed: failed === 1,
    durationMs,
    slots: decoded,
    signals: decodeSignals(signals),
  };
}

interface EncodedArm {
  w: ArmWindow;
  m: string;
  e: EncodedExecution[];
}

const encodeArm = (arm: KeptArm): EncodedArm => ({
  w: arm.window,
  m: arm.mark,
  e: arm.executions.map(encodeExecution),
});
const decodeArm = (arm: EncodedArm): KeptArm => ({
  window: arm.w,
  mark: arm.m,
  executions: arm.e.map(decodeExecution),
});

/** The state compressed, or null when it is too large to keep. */
export function encodeEffectState(state: EffectState): Uint8Array | null {
  const encoded = JSON.stringify({
    v: STATE_FORMAT,
    b: state.builtAt,
    s: state.slotIds,
    f: state.signalsFrom,
    m: state.signalMark,
    a: [encodeArm(state.base), encodeArm(state.applied)],
    o: state.orphans.map((orphan) => [orphan.executionId, ...encodeSignals([orphan])]),
  });
  return Buffer.byteLength(encoded) <= KEPT_STATE_BYTES ? pack(encoded) : null;
}

/** The kept state, or null for one of another format (measured from scratch again). */
export function decodeEffectState(kept: unknown): EffectState | null {
  const encoded = unpack(kept);
  if (encoded === null) return null;
  const parsed = JSON.parse(encoded);
  if (parsed?.v !== STATE_FORMAT) return null;
  const orphans: KeptOrphan[] = (parsed.o as Array<[string, ...EncodedSignals]>).flatMap(
    ([executionId, ...signal]) => decodeSignals(signal).map((kept) => ({ ...kept, executionId })),
  );
  return {
    builtAt: parsed.b,
    slotIds: parsed.s,
    signalsFrom: parsed.f,
    signalMark: parsed.m,
    base: decodeArm(parsed.a[0]),
    applied: decodeArm(parsed.a[1]),
    orphans,
  };
}

/*
 * The kept state in two items, so that a measurement writes little: a *snapshot* of the whole
 * state (`EFFECT#<runId>#STATE`, rewritten rarely) and, in the run's effect item, the *delta*
 * since it: per arm the marks, the oldest key still kept, the executions added and the signals
 * attached to the snapshot's executions; and the signals' mark and orphans. When the delta grows
 * past DELTA_FOLD_BYTES, the next write folds it into a new snapshot (one transaction).
 */

/** Past this, a delta is folded into a new snapshot. */
export const DELTA_FOLD_BYTES = 24_000;

interface EncodedDeltaArm {
  w: ArmWindow;
  m: string;
  /** The oldest key kept ('' when none). */
  c: string;
  e: EncodedExecution[];
  /** Signals attached to snapshot executions: [executionId, ...encoded signals]. */
  x: Array<[string, ...EncodedSignals]>;
}

function deltaArm(arm: KeptArm, snapshot: KeptArm): EncodedDeltaArm {
  const known = new Map(snapshot.executions.map((execution) => [execution.id, execution]));
  const added: EncodedExecution[] = [];
  const attached: EncodedDeltaArm['x'] = [];
  for (const execution of arm.executions) {
    const before = known.get(execution.id);
    if (!before) {
      added.push(encodeExecution(execution));
    } else if (execution.signals.length > before.signals.length) {
      attached.push([execution.id, ...encodeSignals(execution.signals.slice(before.signals.length))]);
    }
  }
  return { w: arm.window, m: arm.mark, c: arm.executions[0]?.key ?? '', e: added, x: attached };
}

function applyDeltaArm(snapshot: KeptArm, delta: EncodedDeltaArm): KeptArm {
  const extra = new Map(delta.x.map(([id, ...signals]) => [id, decodeSignals(signals)]));
  const kept = snapshot.executions
    .filter((execution) => delta.c !== '' && execution.key >= delta.c)
    .map((execution) => ({
      ...execution,
      signals: [...execution.signals, ...(extra.get(execution.id) ?? [])],
    }));
  const executions = mergeByKey(kept, delta.e.map(decodeExecution));
  return { window: delta.w, mark: delta.m, executions };
}

/** True when `state` can be told as a delta of `snapshot` (same build, windows and slots). */
function deltaFits(state: EffectState, snapshot: EffectState): boolean {
  return (
    state.builtAt === snapshot.builtAt &&
    JSON.stringify([state.slotIds, state.signalsFrom, state.base.window, state.applied.window]) ===
      JSON.stringify([snapshot.slotIds, snapshot.signalsFrom, snapshot.base.window, snapshot.applied.window])
  );
}

/** The delta of `state` from `snapshot`, or null when it does not fit or its arms grew past the fold. */
export function encodeEffectDelta(state: EffectState, snapshot: EffectState): Uint8Array | null {
  if (!deltaFits(state, snapshot)) return null;
  const arms = [deltaArm(state.base, snapshot.base), deltaArm(state.applied, snapshot.applied)];
  // The orphans (at most ORPHAN_LIMIT) always travel in the delta: they do not grow it past the fold.
  if (Buffer.byteLength(JSON.stringify(arms)) > DELTA_FOLD_BYTES) return null;
  return pack(
    JSON.stringify({
      v: STATE_FORMAT,
      m: state.signalMark,
      a: arms,
      o: state.orphans.map((orphan) => [orphan.executionId, ...encodeSignals([orphan])]),
    }),
  );
}

/** The state a snapshot and its delta tell (the snapshot is not changed), or null for another format. */
export function applyEffectDelta(snapshot: EffectState, kept: unknown): EffectState | null {
  const encoded = unpack(kept);
  if (encoded === null) return null;
  const parsed = JSON.parse(encoded);
  if (parsed?.v !== STATE_FORMAT) return null;
  const orphans: KeptOrphan[] = (parsed.o as Array<[string, ...EncodedSignals]>).flatMap(
    ([executionId, ...signal]) => decodeSignals(signal).map((kept) => ({ ...kept, executionId })),
  );
  return {
    ...snapshot,
    signalMark: parsed.m,
    base: applyDeltaArm(snapshot.base, parsed.a[0]),
    applied: applyDeltaArm(snapshot.applied, parsed.a[1]),
    orphans,
  };
}
