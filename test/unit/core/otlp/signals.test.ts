import { describe, expect, it } from 'vitest';
import { assembleTrace, kindOf } from '../../../../lambdas/core/otlp/assemble.ts';
import type { SpanEvent, TraceSpan } from '../../../../lambdas/core/otlp/spans.ts';
import { configuration, context, event, span, T0, TRACE } from './trace-spans.ts';

const config = configuration([{ id: 'retrieve' }, { id: 'answer' }]);
const signalsOf = (spans: TraceSpan[]) =>
  assembleTrace(spans, spans[0] as TraceSpan, context(config)).signals;
const evaluation = (attributes: SpanEvent['attributes'], atMs = T0) =>
  event('gen_ai.evaluation.result', attributes, atMs);
/** The one signal of an evaluation event on a root span. */
const signalOf = (attributes: SpanEvent['attributes']) =>
  signalsOf([span('r', { events: [evaluation(attributes)] })])[0];

describe('an evaluation event', () => {
  it("is a signal citing the execution and its span's slot, its id from the span and the event", () => {
    const root = span('r', { events: [evaluation({ 'gen_ai.evaluation.name': 'Relevance' })] });
    const step = span('s', {
      parentSpanId: 'r',
      attributes: { 'pipeline.slot': 'answer' },
      events: [
        event('log'),
        evaluation(
          { 'gen_ai.evaluation.name': 'faithfulness', 'gen_ai.evaluation.score.value': 0.9 },
          T0 + 1500,
        ),
      ],
    });
    expect(signalsOf([root, step])).toEqual([
      {
        id: `${TRACE}-r-0`,
        executionId: TRACE,
        kind: 'relevance',
        severity: 'info',
        message: 'relevance',
        occurredAt: '2026-01-01T00:00:00.000Z',
      },
      {
        id: `${TRACE}-s-1`,
        executionId: TRACE,
        slotId: 'answer',
        kind: 'faithfulness',
        severity: 'info',
        message: 'faithfulness score 0.9',
        value: 0.9,
        occurredAt: '2026-01-01T00:00:01.500Z',
      },
    ]);
  });

  it('says its name, label, score and explanation', () => {
    expect(
      signalOf({
        'gen_ai.evaluation.name': 'tone',
        'gen_ai.evaluation.score.label': 'good',
        'gen_ai.evaluation.score.value': 0.75,
        'gen_ai.evaluation.explanation': 'polite throughout',
      }),
    ).toMatchObject({ kind: 'tone', message: 'tone good score 0.75: polite throughout', value: 0.75 });
    expect(signalOf({ 'gen_ai.evaluation.explanation': '' })).toMatchObject({
      kind: 'evaluation',
      message: 'evaluation',
    });
    const unnamed = signalOf({ 'gen_ai.evaluation.name': 3, 'gen_ai.evaluation.score.value': '0.1' });
    expect(unnamed).toEqual(expect.objectContaining({ kind: 'evaluation', message: 'evaluation' }));
    expect(unnamed).not.toHaveProperty('value');
    const numericLabel = signalOf({ 'gen_ai.evaluation.name': 'tone', 'gen_ai.evaluation.score.label': 1 });
    expect(numericLabel).toMatchObject({ message: 'tone', severity: 'info' });
    const long = signalOf({ 'gen_ai.evaluation.explanation': 'x'.repeat(3000) });
    expect(long?.message).toHaveLength(2000);
  });

  it('is a warning with a failing label, info with a passing one, whatever its score', () => {
    const failing = ['fail', 'failed', 'failing', 'FAIL', 'bad', 'incorrect', 'wrong', 'negative'];
    const alsoFailing = ['toxic', 'unsafe', 'irrelevant', 'hallucinated', 'no', 'false'];
    for (const label of [...failing, ...alsoFailing]) {
      const signal = signalOf({ 'gen_ai.evaluation.score.label': label, 'gen_ai.evaluation.score.value': 1 });
      expect([label, signal?.severity]).toEqual([label, 'warning']);
    }
    const passing = ['pass', 'passed', 'passing', 'Pass', 'good', 'correct', 'right', 'positive'];
    const alsoPassing = ['safe', 'relevant', 'yes', 'true'];
    for (const label of [...passing, ...alsoPassing]) {
      const signal = signalOf({ 'gen_ai.evaluation.score.label': label, 'gen_ai.evaluation.score.value': 0 });
      expect([label, signal?.severity]).toEqual([label, 'info']);
    }
  });

  it('is judged by its score when its label is neither (below 0.5 a warning), and info without either', () => {
    const scored = (label: string | undefined, value: number | undefined) =>
      signalOf({
        ...(label === undefined ? {} : { 'gen_ai.evaluation.score.label': label }),
        ...(value === undefined ? {} : { 'gen_ai.evaluation.score.value': value }),
      })?.severity;
    expect(scored('failure', 1)).toBe('info');
    expect(scored('unfair', 1)).toBe('info');
    expect(scored('nope', 1)).toBe('info');
    expect(scored('passable', 0)).toBe('warning');
    expect(scored('bypass', 0)).toBe('warning');
    expect(scored('passes', 0)).toBe('warning');
    expect(scored('', 0.49)).toBe('warning');
    expect(scored(undefined, 0.5)).toBe('info');
    expect(scored(undefined, 0.49)).toBe('warning');
    expect(scored(undefined, undefined)).toBe('info');
  });
});

describe("a slot's failed span", () => {
  it('is a critical error signal of the slot, once for its outermost span', () => {
    const root = span('r');
    const outer = span('o', {
      parentSpanId: 'r',
      name: 'answer',
      status: 'error',
      statusMessage: 'rate limited',
      endMs: T0 + 2000,
    });
    const nested = span('n', { parentSpanId: 'o', status: 'error', statusMessage: 'inner' });
    const other = span('x', { parentSpanId: 'n', name: 'retrieve', status: 'error' });
    const loose = span('l', { parentSpanId: 'r', status: 'error' });
    const orphan = span('p', {
      parentSpanId: 'gone',
      name: 'retrieve',
      status: 'error',
      statusMessage: 'lost',
    });
    expect(signalsOf([root, outer, nested, other, loose, orphan])).toEqual([
      {
        id: `${TRACE}-o-error`,
        executionId: TRACE,
        slotId: 'answer',
        kind: 'error',
        severity: 'critical',
        message: 'Slot answer failed: rate limited',
        occurredAt: '2026-01-01T00:00:02.000Z',
      },
      {
        id: `${TRACE}-x-error`,
        executionId: TRACE,
        slotId: 'retrieve',
        kind: 'error',
        severity: 'critical',
        message: 'Slot retrieve failed: its span ended with status ERROR',
        occurredAt: '2026-01-01T00:00:00.010Z',
      },
      expect.objectContaining({ id: `${TRACE}-p-error`, message: 'Slot retrieve failed: lost' }),
    ]);
  });

  it('is not a signal when the span ended well, or belongs to no slot', () => {
    const ok = span('o', { parentSpanId: 'r', name: 'answer', status: 'ok' });
    expect(signalsOf([span('r'), ok])).toEqual([]);
    expect(signalsOf([span('r', { status: 'error', statusMessage: 'the whole request failed' })])).toEqual(
      [],
    );
  });
});

describe("a signal kind from an evaluation's name", () => {
  it('is lower case, letters, digits, _ and -, starting with a letter, at most 64 characters', () => {
    expect(kindOf('Answer Relevance')).toBe('answer_relevance');
    expect(kindOf('tone  /  style')).toBe('tone_style');
    expect(kindOf('rag-score_2')).toBe('rag-score_2');
    expect(kindOf('42 - quality')).toBe('quality');
    expect(kindOf('x'.repeat(70))).toBe('x'.repeat(64));
    expect(kindOf('123')).toBe('evaluation');
    expect(kindOf('')).toBe('evaluation');
  });
});
