/*
 * The maintained effect state's rules at their edges (core/rollouts/effect-state.ts): which
 * executions an arm takes and in which order, which slots it keeps, when a kept state must be
 * rebuilt, when an arm is closed, how marks move, and when a merge counts as a change.
 */
import { describe, expect, it } from 'vitest';
import {
  type ArmWindow,
  armClosed,
  emptyState,
  figuresOfState,
  mergeByKey,
  mergeRecorded,
  nextMark,
  ORPHAN_LIMIT,
  REBUILD_AFTER_MS,
  type RecordedExecution,
  type RecordedSignal,
  SETTLE_MS,
  stateFits,
} from '../../../../lambdas/core/rollouts/effect-state.ts';

const T0 = Date.parse('2026-11-25T00:00:00.000Z');
const at = (ms: number) => new Date(T0 + ms).toISOString();
const NO_WINDOW = { signals: '', executions: '' };
type SlotResult = { slotId: string; status: 'succeeded' | 'failed'; durationMs: number };

function run(
  id: string,
  recorded: number,
  options: { started?: number; failed?: boolean; slots?: SlotResult[] | undefined } = {},
): RecordedExecution {
  return {
    key: `${at(recorded)}#${id}`,
    execution: {
      id,
      status: options.failed ? 'failed' : 'succeeded',
      durationMs: 100,
      startedAt: at(options.started ?? recorded),
      ...(options.slots === undefined ? {} : { slotResults: options.slots }),
    },
  };
}

function cite(id: string, recorded: number, executionId: string, occurred = recorded): RecordedSignal {
  return {
    key: `${at(recorded)}#${id}`,
    signal: { id, executionId, severity: 'critical', occurredAt: at(occurred) },
  };
}

const windows = {
  slotIds: ['retriever', 'answer-model'],
  base: { configurationId: 'base', recordedFrom: at(0) } as ArmWindow,
  applied: { configurationId: 'candidate', recordedFrom: at(0) } as ArmWindow,
  signalsFrom: at(0),
};
const start = (overrides: Partial<typeof windows> = {}) =>
  emptyState({ ...windows, ...overrides, now: new Date(T0) });
const later = (ms: number) => new Date(T0 + ms);
const only = (base: RecordedExecution[] | null, signals: RecordedSignal[] = []) => ({
  base,
  applied: [] as RecordedExecution[],
  signals,
});
const ids = (executions: Array<{ id: string }>) => executions.map((execution) => execution.id);

describe('which executions an arm keeps', () => {
  it('keeps them in recording order, whatever order they are read in', () => {
    const first = mergeRecorded(start(), only([run('c', 30), run('a', 10), run('e', 50)]), later(100));
    expect(ids(first.state.base.executions)).toEqual(['a', 'c', 'e']);
    const second = mergeRecorded(first.state, only([run('f', 60), run('b', 20), run('d', 40)]), later(200));
    expect(ids(second.state.base.executions)).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
  });

  it('merges keys into a sorted list without losing any', () => {
    const keyed = (...keys: string[]) => keys.map((key) => ({ key }));
    expect(mergeByKey(keyed('b', 'd'), keyed('e', 'a', 'c'))).toEqual(keyed('a', 'b', 'c', 'd', 'e'));
    expect(mergeByKey(keyed('b'), [])).toEqual(keyed('b'));
    expect(mergeByKey([], keyed('c', 'a', 'b'))).toEqual(keyed('a', 'b', 'c'));
  });

  it('drops the oldest by recording time, even when they were read last', () => {
    const many = Array.from({ length: 1_000 }, (_, i) => run(`n${i}`, 100 + i));
    const state = mergeRecorded(start(), only(many), later(5_000)).state;
    const next = mergeRecorded(state, only([run('older', 50), run('newest', 2_000)]), later(6_000)).state;

    expect(next.base.executions).toHaveLength(1_000);
    expect(ids(next.base.executions)).not.toContain('older');
    expect(ids(next.base.executions).at(-1)).toBe('newest');
    expect(next.base.executions[0]?.id).toBe('n1');
  });

  it('counts only executions started within the window: from inclusive, before exclusive', () => {
    const base = { configurationId: 'base', startedFrom: at(100), startedBefore: at(200) };
    const state = mergeRecorded(
      start({ base }),
      only([
        run('early', 1, { started: 99 }),
        run('first', 2, { started: 100 }),
        run('last', 3, { started: 199 }),
        run('late', 4, { started: 200 }),
      ]),
      later(10),
    ).state;
    expect(ids(state.base.executions)).toEqual(['first', 'last']);
    const open = mergeRecorded(start(), only([run('any', 1, { started: -5_000 })]), later(10)).state;
    expect(ids(open.base.executions)).toEqual(['any']);
  });

  it('keeps the results of the touched slots only, and counts their failures per slot', () => {
    const slots: SlotResult[] = [
      { slotId: 'retriever', status: 'succeeded', durationMs: 30 },
      { slotId: 'answer-model', status: 'failed', durationMs: 70 },
      { slotId: 'elsewhere', status: 'failed', durationMs: 5 },
    ];
    const state = mergeRecorded(
      start(),
      only([run('a', 1, { slots, failed: true }), run('b', 2, { slots: undefined })]),
      later(10),
    ).state;

    expect(state.base.executions[0]?.slots).toHaveLength(2);
    expect(state.base.executions[1]?.slots).toEqual([]);
    const figures = figuresOfState(state, NO_WINDOW, 1);
    expect(figures.slots).toEqual([
      {
        slotId: 'retriever',
        base: { executions: 1, failed: 0, failureRate: 0, durationMs: { p50: 30, p95: 30 } },
        applied: { executions: 0, failed: 0, failureRate: null, durationMs: null },
      },
      {
        slotId: 'answer-model',
        base: { executions: 1, failed: 1, failureRate: 1, durationMs: { p50: 70, p95: 70 } },
        applied: { executions: 0, failed: 0, failureRate: null, durationMs: null },
      },
    ]);
  });
});

describe('the retention windows of the figures', () => {
  it('counts an execution started and a signal occurred exactly at the window start, not before', () => {
    const state = mergeRecorded(
      start(),
      only(
        [run('edge', 1, { started: 100 }), run('before', 2, { started: 99 })],
        [cite('s-edge', 3, 'edge', 500), cite('s-old', 4, 'edge', 499)],
      ),
      later(10),
    ).state;
    const figures = figuresOfState(state, { executions: at(100), signals: at(500) }, 1);

    expect(figures.arms.base).toMatchObject({ executions: 1, signals: { critical: 1 } });
    expect(figures.arms.base.from).toBe(at(100));
  });
});

describe('when a kept state is rebuilt', () => {
  it('fits while younger than REBUILD_AFTER_MS and measuring the same windows and slots', () => {
    const state = start();
    expect(stateFits(state, windows, later(REBUILD_AFTER_MS - 1))).toBe(true);
    expect(stateFits(state, windows, later(REBUILD_AFTER_MS))).toBe(false);
    expect(stateFits(state, { ...windows, slotIds: ['retriever'] }, later(1))).toBe(false);
    const moved = { configurationId: 'base', recordedFrom: at(1) };
    expect(stateFits(state, { ...windows, base: moved }, later(1))).toBe(false);
    expect(stateFits(state, { ...windows, applied: moved }, later(1))).toBe(false);
    expect(stateFits(state, { ...windows, signalsFrom: at(1) }, later(1))).toBe(false);
  });
});

describe('marks and closed arms', () => {
  it('moves a mark to SETTLE_MS behind the clock, never backwards', () => {
    expect(nextMark(at(0), later(10_000))).toBe(at(10_000 - SETTLE_MS));
    expect(nextMark(at(9_000), later(10_000))).toBe(at(9_000));
  });

  it('closes an arm once its mark reaches the end of its recording window', () => {
    const arm = (mark: string, recordedBefore?: string) => ({
      window: { configurationId: 'base', ...(recordedBefore ? { recordedBefore } : {}) },
      mark,
      executions: [],
    });
    expect(armClosed(arm(at(99), at(100)))).toBe(false);
    expect(armClosed(arm(at(100), at(100)))).toBe(true);
    expect(armClosed(arm(at(101), at(100)))).toBe(true);
    expect(armClosed(arm(at(1_000)))).toBe(false);
  });

  it('starts an arm without a recording start before every recording key, and open', () => {
    const state = start({ base: { configurationId: 'base', recordedBefore: at(100) } });
    expect(armClosed(state.base)).toBe(false);
    expect(run('x', -1_000_000).key > state.base.mark).toBe(true);
  });

  it('leaves an arm that was not read as it was', () => {
    const first = mergeRecorded(start(), only([run('a', 1)]), later(10_000)).state;
    const second = mergeRecorded(first, only(null), later(20_000));

    expect(second.state.base).toEqual(first.base);
    expect(second.state.applied.mark).toBe(at(20_000 - SETTLE_MS));
    expect(second.changed).toBe(false);
  });
});

describe('what a merge counts as a change', () => {
  it('is a change when only an execution, only a signal or only an orphan arrives', () => {
    const first = mergeRecorded(start(), only([run('a', 1)]), later(10));
    expect(first.changed).toBe(true);
    const signalled = mergeRecorded(first.state, only([], [cite('s1', 2, 'a')]), later(20));
    expect(signalled.changed).toBe(true);
    const orphaned = mergeRecorded(signalled.state, only([], [cite('s2', 3, 'unseen')]), later(30));
    expect(orphaned.changed).toBe(true);
    expect(orphaned.state.orphans).toHaveLength(1);
    const again = mergeRecorded(orphaned.state, only([], [cite('s2', 3, 'unseen')]), later(40));
    expect(again.changed).toBe(false);
    expect(again.state.orphans).toHaveLength(1);
  });

  it('counts each distinct signal on an execution, each once', () => {
    const first = mergeRecorded(start(), only([run('a', 1)], [cite('s1', 2, 'a')]), later(10)).state;
    const second = mergeRecorded(first, only([], [cite('s2', 3, 'a'), cite('s1', 2, 'a')]), later(20)).state;
    expect(figuresOfState(second, NO_WINDOW, 1).arms.base.signals.critical).toBe(2);
  });

  it('ignores signals recorded before the signal window', () => {
    const state = mergeRecorded(
      start({ signalsFrom: at(100) }),
      only([run('a', 1)], [cite('early', 99, 'a'), cite('late', 101, 'a')]),
      later(200),
    ).state;
    expect(figuresOfState(state, NO_WINDOW, 1).arms.base.signals.critical).toBe(1);
  });

  it('hands a waiting signal to its execution and keeps the others waiting', () => {
    const waiting = mergeRecorded(
      start(),
      only([], [cite('s1', 1, 'a'), cite('s2', 2, 'b')]),
      later(10),
    ).state;
    const arrived = mergeRecorded(waiting, only([run('a', 3)]), later(20)).state;

    expect(arrived.orphans.map((orphan) => orphan.id)).toEqual(['s2']);
    expect(figuresOfState(arrived, NO_WINDOW, 1).arms.base.signals.critical).toBe(1);
  });

  it('keeps the newest orphans by recording time, whatever order they are read in', () => {
    const signals = Array.from({ length: ORPHAN_LIMIT + 1 }, (_, i) => cite(`s${i}`, i + 1, `x${i}`));
    const state = mergeRecorded(start(), only([], signals.reverse()), later(10_000)).state;

    expect(state.orphans).toHaveLength(ORPHAN_LIMIT);
    expect(state.orphans.map((orphan) => orphan.id)).not.toContain('s0');
    expect(state.orphans.at(-1)?.id).toBe(`s${ORPHAN_LIMIT}`);
  });
});
