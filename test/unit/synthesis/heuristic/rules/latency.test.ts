/** The latency rule: slow readings or a slow p90 → a smaller topK or maxTokens, as a guess. */
import { describe, expect, it } from 'vitest';
import { latencyRule } from '../../../../../lambdas/synthesis/heuristic/rules/latency.ts';
import { answer, buildOnly, context, detect, execution, ok, signal, slot, slotRuns } from '../fixtures.ts';

const model = slot('gen', 'model', { maxTokens: 2_000 });
const retrieval = slot('kb', 'retrieval', { topK: 20 });
const GUESS = 'latency has many causes; this trades output length or recall for speed';

describe('latency rule', () => {
  it('counts an info reading from 20 s up as slow, and not one below', () => {
    const reading = (id: string, value: number) =>
      signal(id, { kind: 'latency', message: 'p90 latency', severity: 'info', value, slotId: 'gen' });
    const found = detect(latencyRule, context([model], [reading('slow', 20_000), reading('fine', 19_999)]));
    expect(found.map((f) => f.signals.map((s) => s.id))).toEqual([['slow']]);
    expect(detect(latencyRule, context([model], [reading('fine', 19_999)]))).toEqual([]);
    const unvalued = signal('u', { kind: 'latency', message: 'slow', severity: 'info', slotId: 'gen' });
    expect(detect(latencyRule, context([model], [unvalued]))).toEqual([]);
  });

  it('opens a finding for a slot whose p90 over at least 5 runs is 20 s or more, citing those runs', () => {
    const [found] = detect(latencyRule, context([model], [], slotRuns('gen', 5, 0, '', 20_000)));
    expect(found).toMatchObject({ slot: model, p90Ms: 20_000, latencySamples: 5, runFailures: 0 });
    expect(found?.executions).toHaveLength(5);
    expect(detect(latencyRule, context([model], [], slotRuns('gen', 4, 0, '', 50_000)))).toEqual([]);
    expect(detect(latencyRule, context([model], [], slotRuns('gen', 5, 0, '', 19_999)))).toEqual([]);
  });

  it('cites only the runs that were slow in the slot, for a finding its signals opened', () => {
    const runs = [10, 30_000, 20_000, 19_999, 5, 7].map((durationMs, index) =>
      execution(`r${index}`, index, [ok('gen', durationMs)]),
    );
    const slow = signal('s', { kind: 'latency', message: 'slow response', slotId: 'gen' });
    const [found] = detect(latencyRule, context([model], [slow], runs));
    expect(found).toMatchObject({ p90Ms: 30_000, latencySamples: 6 });
    expect(found?.executions.map((run) => run.id)).toEqual(['r1', 'r2']);
  });

  it('keeps a signal-opened finding uncited by runs when its slot is fast', () => {
    const slow = signal('s', { kind: 'latency', message: 'slow response', slotId: 'gen' });
    const [found] = detect(latencyRule, context([model], [slow], slotRuns('gen', 5, 0, '', 100)));
    expect(found).toMatchObject({ p90Ms: 100, latencySamples: 5, executions: [] });
  });

  it('cites no runs and sizes no p90 from fewer than 5 timed runs', () => {
    const slow = signal('s', { kind: 'latency', message: 'slow response', slotId: 'gen' });
    const [found] = detect(latencyRule, context([model], [slow], slotRuns('gen', 4, 0, '', 30_000)));
    expect(found).toMatchObject({ p90Ms: undefined, latencySamples: 0, executions: [] });
  });

  it('describes the p90 of the readings', () => {
    expect(latencyRule.describeReadings?.([30_000, 10_000, 20_000])).toBe('p90 reported latency 30000 ms');
  });

  it('halves topK of a retrieval slot that has one, not below 3', () => {
    expect(buildOnly(answer(latencyRule, { slot: retrieval }, [model, retrieval]))).toEqual({
      patch: { topK: 10 },
      description: 'Lower topK from 20 to 10.',
      rationale: 'Fewer retrieved items mean less work per call and shorter prompts downstream.',
      guess: GUESS,
    });
    expect(buildOnly(answer(latencyRule, { slot: retrieval }, [retrieval]), { topK: 7 })).toMatchObject({
      patch: { topK: 4 },
    });
    expect(buildOnly(answer(latencyRule, { slot: retrieval }, [retrieval]), { topK: 6 })).toEqual({
      skip: 'topK is 6, too small or unknown to lower safely',
    });
    expect(buildOnly(answer(latencyRule, { slot: retrieval }, [retrieval]), {})).toEqual({
      skip: 'topK is not set, too small or unknown to lower safely',
    });
  });

  it('otherwise trims maxTokens of the model slot by a quarter, not below 1024', () => {
    const actions = answer(latencyRule, { slot: model }, [model]);
    expect(actions).toMatchObject([{ name: 'lowerMaxTokens', slot: model }]);
    expect(buildOnly(actions)).toEqual({
      patch: { maxTokens: 1_500 },
      description: 'Lower maxTokens from 2000 to 1500.',
      rationale: 'Long generations drive latency; a smaller token budget bounds the time per call.',
      guess: GUESS,
    });
    expect(buildOnly(actions, { maxTokens: 1_025 })).toMatchObject({ patch: { maxTokens: 1_024 } });
    expect(buildOnly(actions, { maxTokens: 1_024 })).toEqual({
      skip: 'maxTokens is 1024, too small or unknown to lower safely',
    });
    expect(buildOnly(actions, {})).toEqual({
      skip: 'maxTokens is not set, too small or unknown to lower safely',
    });
  });

  it('does not lower maxTokens that another finding raises, and says so as a conflict', () => {
    const actions = answer(latencyRule, { slot: model }, [model], ['maxTokens|gen']);
    expect(actions).toMatchObject([{ name: 'lowerMaxTokens', slot: model }]);
    expect(buildOnly(actions)).toEqual({
      skip: 'maxTokens of slot "gen" is being raised for truncated output, so it is not lowered for latency',
      conflict: true,
    });
    expect(buildOnly(answer(latencyRule, { slot: model }, [model], ['maxTokens|other']))).toMatchObject({
      patch: { maxTokens: 1_500 },
    });
    expect(buildOnly(answer(latencyRule, { slot: model }, [model], ['topK|gen']))).toMatchObject({
      patch: { maxTokens: 1_500 },
    });
  });

  it('lowers maxTokens of the model slot for a finding naming no slot, or of a slot that has maxTokens', () => {
    expect(answer(latencyRule, { slot: undefined }, [retrieval, model])).toMatchObject([
      { name: 'lowerMaxTokens', slot: model },
    ]);
    const capped = slot('tool', 'tool', { maxTokens: 4_000 });
    expect(answer(latencyRule, { slot: undefined }, [capped])).toMatchObject([{ slot: capped }]);
    const [action] = answer(latencyRule, { slot: undefined }, [model, slot('gen-2', 'model')]);
    expect(action?.slotGuess).toBe('the evidence names no single model slot; "gen" is the nearest of 2');
  });

  it('proposes nothing when no slot takes maxTokens or topK', () => {
    expect(answer(latencyRule, { slot: slot('t', 'tool') }, [slot('t', 'tool')])).toEqual([]);
  });
});
