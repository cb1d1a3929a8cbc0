/** Which signals and runs a synthesis shows, in which order, and the references that number them. */
import { describe, expect, it } from 'vitest';
import type { Execution, Signal } from '../../../../lambdas/core/schemas/records.ts';
import {
  newestFirst,
  percentile,
  selectShownExecutions,
} from '../../../../lambdas/synthesis/evidence/executions.ts';
import { numberShown } from '../../../../lambdas/synthesis/evidence/numbering.ts';
import {
  countRepeats,
  selectShownSignals,
  signalRepeatKey,
} from '../../../../lambdas/synthesis/evidence/signals.ts';

const signal = (id: string, overrides: Partial<Signal> = {}): Signal => ({
  id,
  pipelineId: 'p-1',
  kind: 'error',
  severity: 'warning',
  message: `report ${id}`,
  occurredAt: '2025-03-01T10:00:00.000Z',
  ...overrides,
});
const execution = (id: string, minute: number, overrides: Partial<Execution> = {}): Execution => ({
  id,
  pipelineId: 'p-1',
  configurationId: 'c-1',
  status: 'succeeded',
  durationMs: 100,
  startedAt: new Date(Date.UTC(2025, 2, 1, 10, minute)).toISOString(),
  ...overrides,
});
const ids = (items: readonly { id: string }[]): string[] => items.map((item) => item.id);

describe('signals', () => {
  it('counts repeats of one kind, slot and message together, and no others', () => {
    const same = { message: 'same' };
    const [a, b, c, d] = [
      signal('a', same),
      signal('b', same),
      signal('c', { ...same, slotId: 's' }),
      signal('d', { ...same, kind: 'latency' }),
    ];
    const repeats = countRepeats([a, b, c, d]);
    expect(repeats.get(signalRepeatKey(a))).toBe(2);
    expect(repeats.get(signalRepeatKey(c))).toBe(1);
    expect(repeats.size).toBe(3);
  });

  it('shows one signal per report, most severe, then newest, then by id', () => {
    const window = [
      signal('b'),
      signal('a'),
      signal('c', { occurredAt: '2025-03-01T10:05:00.000Z' }),
      signal('d', { severity: 'critical', occurredAt: '2025-03-01T09:00:00.000Z' }),
      signal('e', { severity: 'info', occurredAt: '2025-03-01T11:00:00.000Z' }),
    ];
    expect(ids(selectShownSignals(window))).toEqual(['d', 'c', 'a', 'b', 'e']);
    expect(ids(selectShownSignals([...window].reverse()))).toEqual(['d', 'c', 'a', 'b', 'e']);
    expect(ids(selectShownSignals(window, 2))).toEqual(['d', 'c']);
  });

  it('keeps the first-sorting repeat of a report, whatever order the window holds them in', () => {
    const repeat = (id: string, occurredAt: string) => signal(id, { message: 'same', occurredAt });
    const older = repeat('y', '2025-03-01T10:00:00.000Z');
    const newer = repeat('z', '2025-03-01T10:01:00.000Z');
    const twin = repeat('x', '2025-03-01T10:01:00.000Z');
    expect(ids(selectShownSignals([older, newer, twin]))).toEqual(['x']);
    expect(ids(selectShownSignals([twin, newer, older]))).toEqual(['x']);
    expect(ids(selectShownSignals([newer, older]))).toEqual(['z']);
  });

  it('breaks a tie of severity and time by id, whatever order the window holds them in', () => {
    const tied = ['d', 'b', 'e', 'a', 'c'].map((id) => signal(id));
    expect(ids(selectShownSignals(tied))).toEqual(['a', 'b', 'c', 'd', 'e']);
  });

  it('shows at most 50 by default', () => {
    const many = Array.from({ length: 60 }, (_, index) => signal(`s${String(index).padStart(2, '0')}`));
    expect(selectShownSignals(many)).toHaveLength(50);
  });
});

describe('executions', () => {
  it('orders runs newest first, then by id', () => {
    const runs = [execution('b', 1), execution('c', 2), execution('a', 1), execution('d', 0)];
    expect(ids(newestFirst(runs))).toEqual(['c', 'a', 'b', 'd']);
    expect(ids(newestFirst([...runs].reverse()))).toEqual(['c', 'a', 'b', 'd']);
    expect(ids(runs)).toEqual(['b', 'c', 'a', 'd']);
  });

  it('breaks a tie of start time by id, whatever order they come in', () => {
    const tied = ['d', 'b', 'e', 'a', 'c'].map((id) => execution(id, 1));
    expect(ids(newestFirst(tied))).toEqual(['a', 'b', 'c', 'd', 'e']);
  });

  it('takes the nearest-rank percentile of unsorted values', () => {
    expect(percentile([], 0.5)).toBeUndefined();
    expect(percentile([30, 10, 20, 40], 0.5)).toBe(20);
    expect(percentile([30, 10, 20, 40], 0.9)).toBe(40);
    expect(percentile([30, 10, 20, 40], 0)).toBe(10);
  });

  it('shows the 12 newest failures, the 4 slowest others, then the newest of the rest, newest first', () => {
    const failed = Array.from({ length: 14 }, (_, index) =>
      execution(`f${String(index).padStart(2, '0')}`, index, { status: 'failed' }),
    );
    const slow = Array.from({ length: 5 }, (_, index) =>
      execution(`s${index}`, 20 + index, { durationMs: 1_000 + index }),
    );
    const quick = Array.from({ length: 6 }, (_, index) => execution(`q${index}`, 30 + index));
    const shown = selectShownExecutions([...failed, ...slow, ...quick]);
    expect(ids(shown)).toEqual([
      'q5',
      'q4',
      'q3',
      'q2',
      's4',
      's3',
      's2',
      's1',
      'f13',
      'f12',
      'f11',
      'f10',
      'f09',
      'f08',
      'f07',
      'f06',
      'f05',
      'f04',
      'f03',
      'f02',
    ]);
    expect(ids(selectShownExecutions([...failed, ...slow, ...quick], 5))).toEqual([
      's4',
      's3',
      's2',
      's1',
      'f13',
    ]);
  });
});

describe('numberShown', () => {
  const [shownA, shownB] = [signal('a', { message: 'one' }), signal('b', { message: 'two' })];
  const shownSignals = [shownA, shownB];
  const runs = [execution('r1', 3), execution('r2', 2), execution('r3', 1)];
  const numbering = numberShown(shownSignals, runs);

  it('refers to a shown signal by its number, through any repeat of it, once and in order', () => {
    const repeatOfA = signal('a2', { message: 'one' });
    const unseen = signal('c', { message: 'three' });
    expect(numbering.signalRefs([shownB, repeatOfA, unseen, shownA])).toEqual([1, 2]);
    expect(numbering.signalRefs([])).toEqual([]);
  });

  it('refers to shown runs by number, lowest first, at most `limit`, and ignores runs not shown', () => {
    const [r1, r2, r3] = runs as [Execution, Execution, Execution];
    expect(numbering.executionRefs([r3, r1, r3, execution('other', 0)], 20)).toEqual([1, 3]);
    expect(numbering.executionRefs([r3, r2, r1], 2)).toEqual([1, 2]);
  });
});
