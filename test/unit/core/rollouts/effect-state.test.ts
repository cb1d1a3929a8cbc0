/*
 * The maintained effect state (core/rollouts/effect-state.ts) and how the store keeps it
 * (store/effect-state.ts): what is read again is not counted twice, a signal recorded before its
 * execution waits for it, the oldest beyond 1,000 go, and the kept string reads back the same.
 */
import { brotliDecompressSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  emptyState,
  figuresOfState,
  mergeRecorded,
  type RecordedExecution,
  type RecordedSignal,
  SETTLE_MS,
} from '../../../../lambdas/core/rollouts/effect-state.ts';
import {
  applyEffectDelta,
  decodeEffectState,
  encodeEffectDelta,
  encodeEffectState,
} from '../../../../lambdas/store/effect-state.ts';

const T0 = Date.parse('2026-11-25T00:00:00.000Z');
const at = (ms: number) => new Date(T0 + ms).toISOString();
const NO_WINDOW = { signals: '', executions: '' };

function execution(n: number, failed = false, id = `e${n}`): RecordedExecution {
  return {
    key: `${at(n)}#${id}`,
    execution: {
      id,
      status: failed ? 'failed' : 'succeeded',
      durationMs: 100 + n,
      startedAt: at(n - 500),
      slotResults: [{ slotId: 'answer-model', status: failed ? 'failed' : 'succeeded', durationMs: 50 }],
    },
  };
}

function signal(
  n: number,
  executionId: string,
  severity: 'info' | 'warning' | 'critical' = 'critical',
): RecordedSignal {
  return { key: `${at(n)}#s${n}`, signal: { id: `s${n}`, executionId, severity, occurredAt: at(n) } };
}

const start = () =>
  emptyState({
    now: new Date(T0),
    slotIds: ['answer-model'],
    base: { configurationId: 'base', recordedFrom: at(0) },
    applied: { configurationId: 'candidate', recordedFrom: at(0) },
    signalsFrom: at(0),
  });

describe('the maintained effect state', () => {
  it('counts an execution or signal read again (within the settle time) once', () => {
    const read = {
      base: [execution(1), execution(2, true)],
      applied: [execution(3)],
      signals: [signal(4, 'e2')],
    };
    const once = mergeRecorded(start(), read, new Date(T0 + 10));
    const twice = mergeRecorded(once.state, read, new Date(T0 + 20));

    expect(twice.changed).toBe(false);
    const figures = figuresOfState(twice.state, NO_WINDOW, 1);
    expect(figures.arms.base).toMatchObject({ executions: 2, failed: 1, signals: { critical: 1 } });
    expect(figures.arms.applied).toMatchObject({ executions: 1, failed: 0 });
    // The marks stay SETTLE_MS behind the reader's clock.
    expect(twice.state.base.mark).toBe(at(20 - SETTLE_MS) > at(0) ? at(20 - SETTLE_MS) : at(0));
  });

  it('keeps a signal recorded before its execution until the execution arrives', () => {
    const first = mergeRecorded(
      start(),
      { base: [], applied: [], signals: [signal(1, 'later', 'warning')] },
      new Date(T0 + 5),
    );
    expect(first.state.orphans).toHaveLength(1);
    const second = mergeRecorded(
      first.state,
      { base: [execution(2, false, 'later')], applied: [], signals: [] },
      new Date(T0 + 6),
    );

    expect(second.state.orphans).toHaveLength(0);
    expect(figuresOfState(second.state, NO_WINDOW, 1).arms.base.signals).toEqual({
      info: 0,
      warning: 1,
      critical: 0,
    });
  });

  it('keeps the newest 1,000 executions an arm by recording time', () => {
    const old = Array.from({ length: 1_000 }, (_, i) => execution(i + 1));
    const state = mergeRecorded(start(), { base: old, applied: [], signals: [] }, new Date(T0 + 5_000)).state;
    const next = mergeRecorded(
      state,
      { base: [execution(2_000, true), execution(2_001, true)], applied: [], signals: [] },
      new Date(T0 + 6_000),
    );

    expect(next.state.base.executions).toHaveLength(1_000);
    expect(next.state.base.executions[0]?.id).toBe('e3');
    expect(figuresOfState(next.state, NO_WINDOW, 1).arms.base).toMatchObject({
      executions: 1_000,
      failed: 2,
    });
  });

  it('does not count what left the retention windows', () => {
    const state = mergeRecorded(
      start(),
      { base: [execution(1), execution(900)], applied: [], signals: [signal(950, 'e1')] },
      new Date(T0 + 1_000),
    ).state;
    const figures = figuresOfState(state, { executions: at(0), signals: at(990) }, 1);

    expect(figures.arms.base).toMatchObject({ executions: 1, signals: { critical: 0 } });
  });

  it('reads back from its kept string exactly, and refuses a state too large for one item', () => {
    const read = {
      base: Array.from({ length: 1_000 }, (_, i) => execution(i + 1, i % 7 === 0)),
      applied: Array.from({ length: 1_000 }, (_, i) =>
        execution(i + 2_000, i % 5 === 0, `c${i}-${'x'.repeat(40)}`),
      ),
      signals: [signal(5_000, 'e7', 'info'), signal(5_001, 'nobody')],
    };
    const state = mergeRecorded(start(), read, new Date(T0 + 10_000)).state;
    const encoded = encodeEffectState(state);

    expect(encoded).not.toBeNull();
    expect(decodeEffectState(encoded)).toEqual(state);
    // Kept compressed: a fraction of its JSON, which versions before kept as a string and still reads.
    const json = brotliDecompressSync(encoded as Uint8Array).toString('utf8');
    expect(encoded?.length).toBeLessThan(json.length / 3);
    expect(decodeEffectState(json)).toEqual(state);
    const huge = { ...state, slotIds: Array.from({ length: 50 }, (_, i) => `slot-${i}`) };
    huge.base = {
      ...state.base,
      executions: state.base.executions.map((kept) => ({
        ...kept,
        slots: Array.from({ length: 50 }, (_, slot) => ({ slot, failed: false, durationMs: 86_400_000 })),
      })),
    };
    expect(encodeEffectState(huge)).toBeNull();
  });

  it('is told as a small delta of its snapshot until the delta grows past the fold', () => {
    const snapshot = mergeRecorded(
      start(),
      {
        base: Array.from({ length: 1_000 }, (_, i) => execution(i + 1)),
        applied: [execution(5)],
        signals: [],
      },
      new Date(T0 + 5_000),
    ).state;
    const decoded = decodeEffectState(encodeEffectState(snapshot));
    if (!decoded) throw new Error('the snapshot reads back');
    const next = mergeRecorded(
      decoded,
      {
        base: [execution(3_000, true)],
        applied: [execution(3_001)],
        signals: [signal(3_002, 'e7', 'warning')],
      },
      new Date(T0 + 6_000),
    ).state;
    const delta = encodeEffectDelta(next, snapshot);

    expect(delta?.length).toBeLessThan(2_000);
    expect(applyEffectDelta(snapshot, delta)).toEqual(next);
    expect(applyEffectDelta(snapshot, brotliDecompressSync(delta as Uint8Array).toString('utf8'))).toEqual(
      next,
    );
    // The snapshot itself is left as it was.
    expect(snapshot.base.executions[0]?.id).toBe('e1');
    const grown = mergeRecorded(
      next,
      { base: Array.from({ length: 600 }, (_, i) => execution(4_000 + i)), applied: [], signals: [] },
      new Date(T0 + 9_000),
    ).state;
    expect(encodeEffectDelta(grown, snapshot)).toBeNull();
    // Many orphans (signals citing executions no arm holds) never force a fold on every write.
    const orphaned = mergeRecorded(
      next,
      {
        base: [],
        applied: [],
        signals: Array.from({ length: 800 }, (_, i) => signal(7_000 + i, `elsewhere-${i}`)),
      },
      new Date(T0 + 10_000),
    ).state;
    expect(orphaned.orphans).toHaveLength(500);
    expect(applyEffectDelta(snapshot, encodeEffectDelta(orphaned, snapshot))).toEqual(orphaned);
  });
});
