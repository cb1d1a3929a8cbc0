/** The timeout rule: calls hitting their time limit → a longer timeoutMs, or a retry at the cap. */
import { describe, expect, it } from 'vitest';
import { timeoutRule } from '../../../../../lambdas/synthesis/heuristic/rules/timeout.ts';
import { answer, buildOnly, context, detect, signal, slot, slotRuns } from '../fixtures.ts';

const model = slot('gen', 'model', { timeoutMs: 30_000 });
const prompt = slot('prompt', 'prompt', { instructions: 'Be brief.' });
const build = (settings: Record<string, unknown>, p90Ms?: number) =>
  buildOnly(answer(timeoutRule, { slot: model, p90Ms }, [model]), settings);

describe('timeout rule', () => {
  it('carries the p90 of the slot runs when at least 5 were timed', () => {
    const [found] = detect(timeoutRule, context([model], [], slotRuns('gen', 10, 2, 'timed out', 5_000)));
    expect(found).toMatchObject({ runFailures: 2, runs: 10, p90Ms: 5_000, latencySamples: 10 });
    const [few] = detect(timeoutRule, context([model], [], slotRuns('gen', 4, 2, 'timed out', 5_000)));
    expect(few).toMatchObject({ runFailures: 2, runs: 4, p90Ms: undefined, latencySamples: 0 });
  });

  it('does not open a finding from durations alone', () => {
    expect(detect(timeoutRule, context([model], [], slotRuns('gen', 10, 0, '', 50_000)))).toEqual([]);
  });

  it('recognises "deadline exceeded" and ETIMEDOUT before any error', () => {
    const found = detect(
      timeoutRule,
      context(
        [model],
        [
          signal('a', { message: 'deadline exceeded', slotId: 'gen' }),
          signal('b', { message: 'Error: ETIMEDOUT', slotId: 'gen' }),
        ],
      ),
    );
    expect(found.flatMap((f) => f.signals.map((s) => s.id))).toEqual(['a', 'b']);
  });

  it('doubles a set timeoutMs up to the cap', () => {
    expect(build({ timeoutMs: 30_000 })).toEqual({
      patch: { timeoutMs: 60_000 },
      description: 'Raise timeoutMs from 30000 to 60000.',
      rationale:
        'Calls hit their time limit; a longer limit lets slow but healthy calls finish instead of failing the run.',
    });
    expect(build({ timeoutMs: 400_000 })).toMatchObject({ patch: { timeoutMs: 600_000 } });
  });

  it('adds a retry once timeoutMs is at the cap, and gives up when retries are too', () => {
    expect(build({ timeoutMs: 600_000, maxRetries: 1 })).toEqual({
      patch: { maxRetries: 2 },
      description: 'Raise maxRetries from 1 to 2.',
      rationale:
        'The failures look transient (rate limits, overload, dropped connections or time limits); another retry recovers most of them.',
    });
    expect(build({ timeoutMs: 600_000, maxRetries: 5 })).toEqual({
      skip: 'timeoutMs is already 600000 and maxRetries is already 5, the most this heuristic sets',
    });
  });

  it('sets twice the p90, rounded up to a second and between 30 s and the cap, when none is set', () => {
    expect(build({}, 20_001)).toEqual({
      patch: { timeoutMs: 41_000 },
      description: 'Set timeoutMs to 41000 (it was not set).',
      rationale:
        'Calls hit their time limit; an explicit limit of 41000 ms is twice the p90 duration of 20001 ms.',
      guess: 'timeoutMs was not set, so the limit in force is unknown and 41000 ms may not be higher',
    });
    expect(build({}, 12_300)).toMatchObject({ patch: { timeoutMs: 30_000 } });
    expect(build({}, 400_000)).toMatchObject({ patch: { timeoutMs: 600_000 } });
  });

  it('sets 60 s as a starting point when neither a limit nor a p90 is known', () => {
    expect(build({})).toMatchObject({
      patch: { timeoutMs: 60_000 },
      rationale: 'Calls hit their time limit; an explicit limit of 60000 ms is a starting point.',
    });
  });

  it('patches the slot that makes the call: a prompt slot only when it has a timeout of its own', () => {
    expect(answer(timeoutRule, { slot: prompt }, [prompt, model])).toMatchObject([
      { name: 'timeout', slot: model },
    ]);
    const timedPrompt = slot('prompt', 'prompt', { timeoutMs: 5_000 });
    expect(answer(timeoutRule, { slot: timedPrompt }, [timedPrompt, model])).toMatchObject([
      { slot: timedPrompt },
    ]);
    const retrieval = slot('kb', 'retrieval');
    expect(answer(timeoutRule, { slot: retrieval }, [retrieval, model])).toMatchObject([{ slot: retrieval }]);
  });
});
