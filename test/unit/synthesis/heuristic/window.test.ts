/** Reading the window for the rules: each signal and failed run named by its fault, runs per slot. */
import { describe, expect, it } from 'vitest';
import type { SlotRuns } from '../../../../lambdas/synthesis/heuristic/rule.ts';
import { HEURISTIC_RULES } from '../../../../lambdas/synthesis/heuristic/rules.ts';
import { classify, readWindow } from '../../../../lambdas/synthesis/heuristic/window.ts';
import { context, execution, failed, ok, signal, slot } from './fixtures.ts';

const gen = slot('gen', 'model');
const kb = slot('kb', 'retrieval');

describe('classify', () => {
  it('names the first fault of the table whose pattern matches kind and message, in any case', () => {
    expect(classify(HEURISTIC_RULES, 'error', 'Request TIMED OUT')).toBe('timeout');
    expect(classify(HEURISTIC_RULES, 'error', 'output truncated, timed out')).toBe('truncation');
    expect(classify(HEURISTIC_RULES, 'feedback', 'great')).toBe('quality');
    expect(classify(HEURISTIC_RULES, 'note', 'all good')).toBeUndefined();
  });
});

describe('readWindow', () => {
  it('sets aside signals of slots the configuration lacks, and names those slots once, sorted', () => {
    const { window, staleSlotIds } = readWindow(
      context(
        [gen],
        [
          signal('a', { message: 'crash', slotId: 'zeta' }),
          signal('b', { message: 'crash', slotId: 'alpha' }),
          signal('c', { message: 'crash', slotId: 'zeta' }),
          signal('d', { message: 'crash', slotId: 'gen' }),
        ],
      ),
      HEURISTIC_RULES,
    );
    expect(staleSlotIds).toEqual(['alpha', 'zeta']);
    expect(window.signals).toEqual([
      { signal: expect.objectContaining({ id: 'd' }), fault: 'error', slot: gen },
    ]);
  });

  it('keeps warning signals of a known fault, critical ones of any kind, and info ones their rule accepts', () => {
    const { window } = readWindow(
      context(
        [gen],
        [
          signal('warn', { kind: 'note', message: 'json parse error' }),
          signal('crit', { kind: 'note', message: 'odd', severity: 'critical' }),
          signal('odd', { kind: 'note', message: 'odd', severity: 'warning' }),
          signal('info', { kind: 'note', message: 'json parse error', severity: 'info', value: 0 }),
          signal('slow', { kind: 'latency', message: 'p95', severity: 'info', value: 25_000 }),
          signal('info-odd', { kind: 'note', message: 'odd', severity: 'info', value: 3 }),
        ],
      ),
      HEURISTIC_RULES,
    );
    expect(window.signals.map(({ signal, fault }) => [signal.id, fault])).toEqual([
      ['warn', 'format'],
      ['crit', 'error'],
      ['slow', 'latency'],
    ]);
  });

  it('counts runs, durations and failures per slot, and failed runs with no failed slot apart', () => {
    const runs = [
      execution('r1', 1, [failed('gen', 'rate limit'), ok('kb', 50), ok('ghost', 1)]),
      execution('r2', 2, [ok('gen', 20), failed('kb')]),
      execution('r3', 3, undefined, { status: 'failed', error: 'output truncated' }),
      execution('r4', 4, [ok('gen', 30), failed('ghost')], { status: 'failed' }),
      execution('r5', 5, [ok('gen', 40)]),
    ];
    const { window } = readWindow(context([gen, kb], [], runs), HEURISTIC_RULES);
    const genRuns = window.runsBySlot.get('gen');
    expect(genRuns?.runs).toBe(4);
    expect(genRuns?.durations).toEqual([100, 20, 30, 40]);
    expect(genRuns?.timedRuns.map((run) => run.id)).toEqual(['r1', 'r2', 'r4', 'r5']);
    const failedIds = (runs: SlotRuns | undefined) =>
      [...(runs?.failedRuns ?? [])].map(([fault, failed]) => [fault, failed.map((run) => run.id)]);
    expect(failedIds(genRuns)).toEqual([['transient', ['r1']]]);
    expect(failedIds(window.runsBySlot.get('kb'))).toEqual([['error', ['r2']]]);
    expect(window.runsBySlot.has('ghost')).toBe(false);
    const unattributed = window.unattributedRuns;
    expect(unattributed.runs).toBe(5);
    expect(failedIds(unattributed)).toEqual([
      ['truncation', ['r3']],
      ['error', ['r4']],
    ]);
  });

  it('counts a slot failing twice in the window twice', () => {
    const runs = [execution('r1', 1, [failed('gen', 'crash')]), execution('r2', 2, [failed('gen', 'crash')])];
    const genRuns = readWindow(context([gen], [], runs), HEURISTIC_RULES).window.runsBySlot.get('gen');
    expect(genRuns?.failedRuns.get('error')?.map((run) => run.id)).toEqual(['r1', 'r2']);
  });
});
