/** Gathering one fault's evidence per slot, and the order findings are reported in. */
import { describe, expect, it } from 'vitest';
import { collectFaultEvidence, detectFindings } from '../../../../lambdas/synthesis/heuristic/detect.ts';
import { HEURISTIC_RULES } from '../../../../lambdas/synthesis/heuristic/rules.ts';
import { context, execution, failed, ok, signal, slot, slotRuns, windowOf } from './fixtures.ts';

const gen = slot('gen', 'model');
const kb = slot('kb', 'retrieval');

describe('collectFaultEvidence', () => {
  it('attaches even scattered run failures to a finding its signals opened', () => {
    const runs = slotRuns('gen', 20, 1, 'crash');
    const window = windowOf(context([gen], [signal('s', { message: 'crash', slotId: 'gen' })], runs));
    const [found] = collectFaultEvidence(window, 'error');
    expect(found).toMatchObject({ slot: gen, runFailures: 1, runs: 20 });
    expect(found?.executions.map((run) => run.id)).toEqual(['gen-r0']);
  });

  it('attaches no run counts to a finding its signals opened when no run failed that way', () => {
    const window = windowOf(
      context([gen], [signal('s', { message: 'crash', slotId: 'gen' })], slotRuns('gen', 20)),
    );
    const [found] = collectFaultEvidence(window, 'error');
    expect(found).toMatchObject({ slot: gen, runFailures: 0, runs: 0, executions: [] });
  });

  it('opens a finding naming no slot for concentrated failed runs with no failed slot', () => {
    const runs = [
      execution('a', 1, undefined, { status: 'failed', error: 'crash' }),
      execution('b', 2, undefined, { status: 'failed', error: 'crash' }),
      ...slotRuns('gen', 8),
    ];
    const [found] = collectFaultEvidence(windowOf(context([gen], [], runs)), 'error');
    expect(found).toMatchObject({ slot: undefined, runFailures: 2, runs: 10 });
    expect(found?.executions.map((run) => run.id)).toEqual(['a', 'b']);
  });

  it('calls the slot hook once per slot that ran, with the evidence found there so far', () => {
    const runs = [execution('r', 1, [failed('gen', 'crash'), ok('kb')])];
    const window = windowOf(
      context([gen, kb, slot('idle', 'tool')], [signal('s', { message: 'crash', slotId: 'gen' })], runs),
    );
    const seen: [number, boolean][] = [];
    collectFaultEvidence(window, 'error', (stats, found) => seen.push([stats.runs, found !== undefined]));
    expect(seen).toEqual([
      [1, true],
      [1, false],
    ]);
  });
});

describe('detectFindings', () => {
  it('puts the table order before the slot order', () => {
    const signals = [
      signal('e', { kind: 'note', message: 'crash', slotId: 'gen' }),
      signal('f', { kind: 'note', message: 'json', slotId: 'kb' }),
    ];
    const found = detectFindings(windowOf(context([gen, kb], signals)), HEURISTIC_RULES);
    expect(found.map(({ rule, evidence }) => `${rule.fault}@${evidence.slot?.id}`)).toEqual([
      'format@kb',
      'error@gen',
    ]);
    expect(found.map(({ evidence }) => evidence.executions)).toEqual([[], []]);
  });

  it('reports the most severe first, then the most evidence, then table order, then slot order', () => {
    const warn = (id: string, message: string, slotId?: string) =>
      signal(id, { kind: 'note', message, ...(slotId === undefined ? {} : { slotId }) });
    const signals = [
      signal('crit', { kind: 'note', message: 'json broken', severity: 'critical', slotId: 'kb' }),
      warn('t1', 'truncated', 'gen'),
      warn('t2', 'truncated!', 'gen'),
      warn('t3', 'truncated?', 'gen'),
      warn('e1', 'crash', 'kb'),
      warn('e2', 'crash'),
      warn('e3', 'crash', 'gen'),
      warn('f1', 'json', 'gen'),
      signal('q1', { kind: 'eval', message: 'score', severity: 'info', value: 0.1 }),
      signal('q2', { kind: 'eval', message: 'score', severity: 'info', value: 0.2 }),
    ];
    const runs = [
      ...Array.from({ length: 5 }, (_, index) => execution(`slow${index}`, index, [ok('kb', 30_000)])),
      execution('to1', 6, [failed('kb', 'timed out')]),
      execution('to2', 7, [failed('kb', 'timed out')]),
    ];
    const found = detectFindings(windowOf(context([gen, kb], signals, runs)), HEURISTIC_RULES);
    expect(found.map(({ rule, evidence }) => `${rule.fault}@${evidence.slot?.id ?? '-'}`)).toEqual([
      'format@kb',
      'truncation@gen',
      'timeout@kb',
      'format@gen',
      'error@gen',
      'error@kb',
      'error@-',
      'quality@-',
      'latency@kb',
    ]);
  });
});
