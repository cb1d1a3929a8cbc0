import { describe, expect, it } from 'vitest';
import {
  assembleTrace,
  configurationIdOf,
  errorOf,
  rootOf,
  slotsOf,
} from '../../../../lambdas/core/otlp/assemble.ts';
import type { Attributes, TraceSpan } from '../../../../lambdas/core/otlp/spans.ts';
import { configuration, context, event, span, T0, TRACE } from './trace-spans.ts';

const ids = (map: Map<TraceSpan, string>) =>
  Object.fromEntries([...map].map(([at, slot]) => [at.spanId, slot]));

describe("a trace's root", () => {
  it('is its span without a parent; a trace with none has no root yet', () => {
    expect(rootOf([])).toBeUndefined();
    expect(rootOf([span('b', { parentSpanId: 'a' })])).toBeUndefined();
    const root = span('a', { startMs: T0 + 5 });
    expect(rootOf([span('b', { parentSpanId: 'a', startMs: T0 }), root])).toBe(root);
  });

  it('is the earliest of several, then the lowest id, in whatever order they came', () => {
    const early = span('z', { startMs: T0 });
    const late = span('a', { startMs: T0 + 1 });
    expect(rootOf([late, early])).toBe(early);
    expect(rootOf([early, late])).toBe(early);
    const low = span('a1');
    const high = span('b1');
    expect(rootOf([high, low])).toBe(low);
    expect(rootOf([low, high])).toBe(low);
  });
});

describe('the configuration a trace ran', () => {
  const flag = (attributes: Record<string, string>) => event('feature_flag.evaluation', attributes);

  it("is a feature flag evaluation's variant when the flag is the pipeline", () => {
    const flagged = span('a', {
      events: [
        event('exception', { 'feature_flag.key': 'pipe-1', 'feature_flag.result.variant': 'not-a-flag' }),
        flag({ 'feature_flag.key': 'other', 'feature_flag.result.variant': 'cfg-other' }),
        flag({ 'feature_flag.key': 'pipe-1', 'feature_flag.result.variant': 'cfg-7' }),
      ],
    });
    expect(configurationIdOf([flagged], 'pipe-1')).toBe('cfg-7');
  });

  it('reads the older variant attribute, skips an empty one, and reads a span named for the event', () => {
    const older = span('a', {
      events: [flag({ 'feature_flag.key': 'pipe-1', 'feature_flag.variant': 'cfg-2' })],
    });
    expect(configurationIdOf([older], 'pipe-1')).toBe('cfg-2');
    const empty = span('a', {
      events: [
        flag({ 'feature_flag.key': 'pipe-1', 'feature_flag.result.variant': '' }),
        flag({ 'feature_flag.key': 'pipe-1', 'feature_flag.variant': 'cfg-3' }),
      ],
    });
    expect(configurationIdOf([empty], 'pipe-1')).toBe('cfg-3');
    const asSpan = span('a', {
      name: 'feature_flag.evaluation',
      attributes: { 'feature_flag.key': 'pipe-1', 'feature_flag.result.variant': 'cfg-4' },
    });
    expect(configurationIdOf([asSpan], 'pipe-1')).toBe('cfg-4');
    const numbered = span('a', {
      attributes: { 'pipeline.configuration_id': 'cfg-5' },
      events: [event('feature_flag.evaluation', { 'feature_flag.key': 'pipe-1', 'feature_flag.variant': 5 })],
    });
    expect(configurationIdOf([numbered], 'pipe-1')).toBe('cfg-5');
    const otherName = span('a', {
      name: 'evaluate flag',
      attributes: { 'feature_flag.key': 'pipe-1', 'feature_flag.result.variant': 'cfg-4' },
    });
    expect(configurationIdOf([otherName], 'pipe-1')).toBeUndefined();
  });

  it('is else the attribute pipeline.configuration_id, read from the earliest span that has one', () => {
    const first = span('b', { startMs: T0, attributes: { 'pipeline.configuration_id': 'cfg-first' } });
    const later = span('a', { startMs: T0 + 1, attributes: { 'pipeline.configuration_id': 'cfg-later' } });
    expect(configurationIdOf([later, first], 'pipe-1')).toBe('cfg-first');
    const tieLow = span('a', { attributes: { 'pipeline.configuration_id': 'cfg-a' } });
    const tieHigh = span('b', { attributes: { 'pipeline.configuration_id': 'cfg-b' } });
    expect(configurationIdOf([tieHigh, tieLow], 'pipe-1')).toBe('cfg-a');
    expect(configurationIdOf([tieLow, tieHigh], 'pipe-1')).toBe('cfg-a');
    const blank = span('a', { attributes: { 'pipeline.configuration_id': '' } });
    expect(configurationIdOf([blank], 'pipe-1')).toBeUndefined();
    const numeric = span('a', { attributes: { 'pipeline.configuration_id': 7 } });
    expect(configurationIdOf([numeric], 'pipe-1')).toBeUndefined();
  });

  it("is the flag's when a span carries both", () => {
    const both = span('a', {
      attributes: { 'pipeline.configuration_id': 'cfg-attr' },
      events: [flag({ 'feature_flag.key': 'pipe-1', 'feature_flag.result.variant': 'cfg-flag' })],
    });
    expect(configurationIdOf([both], 'pipe-1')).toBe('cfg-flag');
  });
});

describe('the slot a span belongs to', () => {
  const slots = configuration([
    { id: 'retrieve' },
    { id: 'answer', model: 'claude-x' },
    { id: 'judge' },
  ]).slots;

  it('is named by pipeline.slot or by the span name, else by its nearest named ancestor', () => {
    const root = span('r', { name: 'request' });
    const step = span('s', { parentSpanId: 'r', attributes: { 'pipeline.slot': 'retrieve' } });
    const inner = span('i', { parentSpanId: 's', name: 'http get' });
    const named = span('n', { parentSpanId: 'r', name: 'judge' });
    const wrong = span('w', { parentSpanId: 'n', name: 'answer', attributes: { 'pipeline.slot': 'nope' } });
    const numbered = span('x', { parentSpanId: 'r', attributes: { 'pipeline.slot': 3 } });
    expect(ids(slotsOf([root, step, inner, named, wrong, numbered], slots))).toStrictEqual({
      s: 'retrieve',
      i: 'retrieve',
      n: 'judge',
      w: 'answer',
    });
  });

  it('survives a cycle of parents without naming a slot', () => {
    const a = span('a', { parentSpanId: 'b' });
    const b = span('b', { parentSpanId: 'a' });
    expect(ids(slotsOf([a, b], slots))).toStrictEqual({});
  });

  it("is else, for a GenAI span, the one slot whose model is the span's model", () => {
    const genAiAttributes: Attributes[] = [
      { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'claude-x' },
      { 'gen_ai.system': 'anthropic', 'gen_ai.response.model': 'claude-x' },
      { 'llm.model_name': 'claude-x' },
      { 'openinference.span.kind': 'LLM', 'gen_ai.request.model': 'claude-x' },
    ];
    const genAi = genAiAttributes.map((attributes, index) => span(`g${index}`, { attributes }));
    const otherAttributes: Attributes[] = [
      { 'gen_ai.request.model': 'claude-x' },
      { 'openinference.span.kind': 'CHAIN', 'gen_ai.request.model': 'claude-x' },
    ];
    const notGenAi = otherAttributes.map((attributes, index) => span(`n${index}`, { attributes }));
    expect(ids(slotsOf([...genAi, ...notGenAi], slots))).toStrictEqual({
      g0: 'answer',
      g1: 'answer',
      g2: 'answer',
      g3: 'answer',
    });
  });

  it('prefers the request model, then the model name, over the response model', () => {
    const two = configuration([
      { id: 'a', model: 'requested' },
      { id: 'b', model: 'answered' },
      { id: 'c', model: 'named' },
    ]).slots;
    const both = span('x', {
      attributes: {
        'gen_ai.system': 's',
        'gen_ai.request.model': 'requested',
        'gen_ai.response.model': 'answered',
      },
    });
    const legacy = span('y', {
      attributes: { 'llm.model_name': 'named', 'gen_ai.response.model': 'answered' },
    });
    expect(ids(slotsOf([both, legacy], two))).toStrictEqual({ x: 'a', y: 'c' });
  });

  it('is none when two slots share the model, or the span names no model', () => {
    const shared = configuration([
      { id: 'a', model: 'm' },
      { id: 'b', model: 'm' },
    ]).slots;
    expect(ids(slotsOf([span('x', { attributes: { 'llm.model_name': 'm' } })], shared))).toStrictEqual({});
    const noModel = configuration([{ id: 'a' }]).slots;
    expect(
      ids(slotsOf([span('x', { attributes: { 'gen_ai.operation.name': 'chat' } })], noModel)),
    ).toStrictEqual({});
  });
});

describe('what went wrong in a span', () => {
  it('joins the error type and the status message, each once', () => {
    expect(
      errorOf(span('a', { attributes: { 'error.type': 'Timeout' }, statusMessage: 'took too long' })),
    ).toBe('Timeout: took too long');
    expect(errorOf(span('a', { attributes: { 'error.type': 'Timeout' }, statusMessage: 'Timeout' }))).toBe(
      'Timeout',
    );
    expect(errorOf(span('a', { attributes: { 'error.type': 500 } }))).toBe('500');
  });

  it("falls back on the exception event's type and message, and is nothing when nothing says", () => {
    const thrown = event('exception', {
      'exception.type': 'TypeError',
      'exception.message': 'x is undefined',
    });
    expect(errorOf(span('a', { events: [event('log'), thrown] }))).toBe('TypeError: x is undefined');
    expect(errorOf(span('a', { events: [thrown], statusMessage: '' }))).toBe('TypeError');
    expect(
      errorOf(span('a', { events: [thrown], attributes: { 'error.type': 'E' }, statusMessage: 'said' })),
    ).toBe('E: said');
    expect(errorOf(span('a', { events: [event('log', { 'exception.type': 'X' })] }))).toBeUndefined();
    expect(errorOf(span('a'))).toBeUndefined();
  });

  it('is cut at 2,000 characters', () => {
    expect(errorOf(span('a', { statusMessage: 'e'.repeat(2000) }))).toBe('e'.repeat(2000));
    const long = errorOf(span('a', { statusMessage: 'e'.repeat(2001) }));
    expect(long).toBe(`${'e'.repeat(1999)}…`);
  });
});

describe('the execution of a trace', () => {
  const config = configuration([{ id: 'retrieve' }, { id: 'answer', model: 'claude-x' }, { id: 'unused' }]);

  it('takes its id, times and status from the trace and its root', () => {
    const root = span('r', { startMs: T0 + 0.6, endMs: T0 + 250.4 });
    const { execution, signals } = assembleTrace([root], root, context(config));
    expect(execution).toEqual({
      id: TRACE,
      configurationId: 'cfg-1',
      status: 'succeeded',
      durationMs: 250,
      startedAt: '2026-01-01T00:00:00.000Z',
    });
    expect(signals).toEqual([]);
  });

  it('is failed with the reason when the root ended in error, not when it only logged an exception', () => {
    const thrown = event('exception', { 'exception.type': 'ValueError', 'exception.message': 'bad' });
    const failed = span('r', { status: 'error', events: [thrown] });
    expect(assembleTrace([failed], failed, context(config)).execution).toMatchObject({
      status: 'failed',
      error: 'ValueError: bad',
    });
    const silent = span('r', { status: 'error' });
    expect(assembleTrace([silent], silent, context(config)).execution).not.toHaveProperty('error');
    const handled = span('r', { status: 'ok', events: [thrown] });
    const execution = assembleTrace([handled], handled, context(config)).execution;
    expect(execution.status).toBe('succeeded');
    expect(execution).not.toHaveProperty('error');
  });

  it('lasts at least nothing and at most a day', () => {
    const backwards = span('r', { startMs: T0 + 100, endMs: T0 });
    expect(assembleTrace([backwards], backwards, context(config)).execution.durationMs).toBe(0);
    const endless = span('r', { endMs: T0 + 3 * 86_400_000 });
    expect(assembleTrace([endless], endless, context(config)).execution.durationMs).toBe(86_400_000);
  });

  it('reports each slot that ran: its duration, outcome and summed tokens', () => {
    const root = span('r', { startMs: T0, endMs: T0 + 1000 });
    const step = span('s1', {
      parentSpanId: 'r',
      startMs: T0 + 10,
      endMs: T0 + 60,
      attributes: { 'pipeline.slot': 'retrieve' },
    });
    const call = (spanId: string, attributes: TraceSpan['attributes'], times: [number, number]) =>
      span(spanId, { parentSpanId: 'r', startMs: T0 + times[0], endMs: T0 + times[1], attributes });
    const calls = [
      call(
        'c1',
        { 'llm.model_name': 'claude-x', 'gen_ai.usage.input_tokens': 10.4, 'gen_ai.usage.output_tokens': 5 },
        [100, 200],
      ),
      call(
        'c2',
        {
          'llm.model_name': 'claude-x',
          'gen_ai.usage.prompt_tokens': 20,
          'gen_ai.usage.completion_tokens': 7.6,
        },
        [150, 400],
      ),
      call(
        'c3',
        { 'llm.model_name': 'claude-x', 'llm.token_count.prompt': 30, 'llm.token_count.completion': 1 },
        [120, 300],
      ),
      call(
        'c4',
        { 'llm.model_name': 'claude-x', 'gen_ai.usage.input_tokens': '9', 'gen_ai.usage.prompt_tokens': 2 },
        [130, 140],
      ),
    ];
    const { execution } = assembleTrace([root, step, ...calls], root, context(config));
    expect(execution.slotResults).toEqual([
      { slotId: 'retrieve', status: 'succeeded', durationMs: 50 },
      { slotId: 'answer', status: 'succeeded', durationMs: 300, inputTokens: 62, outputTokens: 14 },
    ]);
  });

  it("is failed in a slot when the slot's earliest outermost span failed, not a nested one", () => {
    const root = span('r');
    const outer = span('o', { parentSpanId: 'r', attributes: { 'pipeline.slot': 'retrieve' } });
    const nested = span('n', { parentSpanId: 'o', status: 'error', statusMessage: 'retried' });
    const late = span('l', {
      parentSpanId: 'r',
      name: 'answer',
      startMs: T0 + 5,
      status: 'error',
      statusMessage: 'late',
    });
    const early = span('e', {
      parentSpanId: 'r',
      name: 'answer',
      startMs: T0 + 1,
      status: 'error',
      statusMessage: 'early',
    });
    const silent = span('q', { parentSpanId: 'r', name: 'answer', status: 'error' });
    const { execution } = assembleTrace([root, outer, nested, late, early], root, context(config));
    expect(execution.slotResults).toEqual([
      { slotId: 'retrieve', status: 'succeeded', durationMs: 10 },
      { slotId: 'answer', status: 'failed', durationMs: 9, error: 'early' },
    ]);
    const quiet = assembleTrace([root, silent], root, context(config)).execution.slotResults;
    expect(quiet).toEqual([{ slotId: 'answer', status: 'failed', durationMs: 10 }]);
  });

  it("keeps the root's input, else the first GenAI span's messages, redacted and parsed when JSON", () => {
    const redact = (text: string) => text.replaceAll('secret', '[redacted]');
    const messages = (spanId: string, startMs: number, text: string) =>
      span(spanId, { parentSpanId: 'r', startMs, attributes: { 'gen_ai.input.messages': text } });
    const root = span('r', { attributes: { 'input.value': '{"question":"a secret?"}' } });
    const first = messages('m1', T0 + 1, '[{"role":"user","content":"first"}]');
    const second = messages('m2', T0 + 2, 'second');
    expect(assembleTrace([root, second, first], root, context(config, redact)).execution.input).toEqual({
      question: 'a [redacted]?',
    });
    const bare = span('r');
    expect(assembleTrace([bare, second, first], bare, context(config)).execution.input).toEqual([
      { role: 'user', content: 'first' },
    ]);
    expect(assembleTrace([bare, second], bare, context(config, redact)).execution.input).toBe('second');
    const numeric = span('r', { attributes: { 'input.value': 42 } });
    expect(assembleTrace([numeric], numeric, context(config)).execution).not.toHaveProperty('input');
  });
});
