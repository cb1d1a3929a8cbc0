/** The transient and error rules: failures that a retry may recover → another maxRetries. */
import { describe, expect, it } from 'vitest';
import { errorRule } from '../../../../../lambdas/synthesis/heuristic/rules/error.ts';
import { transientRule } from '../../../../../lambdas/synthesis/heuristic/rules/transient.ts';
import { answer, buildOnly, context, detect, signal, slot } from '../fixtures.ts';

const model = slot('gen', 'model', { maxRetries: 1 });
const TRANSIENT =
  'The failures look transient (rate limits, overload, dropped connections or time limits); another retry recovers most of them.';
const ERROR = 'The slot fails often; another retry may recover intermittent failures.';

describe('transient rule', () => {
  it('finds rate limits, overload and dropped connections, and answers with a retry', () => {
    const found = detect(
      transientRule,
      context(
        [model],
        [
          signal('a', { message: 'HTTP 429 rate limit', slotId: 'gen' }),
          signal('b', { message: 'socket hang up', slotId: 'gen' }),
        ],
      ),
    );
    expect(found.map((f) => f.signals.length)).toEqual([2]);
    expect(answer(transientRule, { slot: model }, [model])).toMatchObject([{ name: 'retries', slot: model }]);
  });

  it('adds one retry, with the transient rationale and no guess', () => {
    expect(buildOnly(answer(transientRule, { slot: model }, [model]))).toEqual({
      patch: { maxRetries: 2 },
      description: 'Raise maxRetries from 1 to 2.',
      rationale: TRANSIENT,
    });
    expect(buildOnly(answer(transientRule, { slot: model }, [model]), { maxRetries: 4 })).toMatchObject({
      patch: { maxRetries: 5 },
    });
  });

  it('stops at 5 retries', () => {
    expect(buildOnly(answer(transientRule, { slot: model }, [model]), { maxRetries: 5 })).toEqual({
      skip: 'maxRetries is already 5, the most this heuristic sets',
    });
  });

  it('sets 2 retries, as a guess, when none (or no number) is set', () => {
    const unset = {
      patch: { maxRetries: 2 },
      description: 'Set maxRetries to 2 (it was not set).',
      rationale: TRANSIENT,
      guess: 'maxRetries was not set, so the retries in force are unknown',
    };
    expect(buildOnly(answer(transientRule, { slot: model }, [model]), {})).toEqual(unset);
    expect(buildOnly(answer(transientRule, { slot: model }, [model]), { maxRetries: '3' })).toEqual(unset);
    expect(buildOnly(answer(transientRule, { slot: model }, [model]), { maxRetries: Number.NaN })).toEqual(
      unset,
    );
  });
});

describe('the slot a retry goes to', () => {
  it('is a slot of any kind that already has maxRetries, when the finding names none', () => {
    const worker = slot('worker', 'tool', { maxRetries: 0 });
    for (const rule of [transientRule, errorRule]) {
      expect(answer(rule, { slot: undefined }, [slot('p', 'prompt'), worker])).toMatchObject([
        { slot: worker },
      ]);
    }
  });
});

describe('error rule', () => {
  it('takes errors no other rule names, and critical signals of any kind', () => {
    const found = detect(
      errorRule,
      context(
        [model],
        [
          signal('a', { message: 'tool crashed', slotId: 'gen' }),
          signal('b', { kind: 'custom', message: 'something odd', severity: 'critical', slotId: 'gen' }),
          signal('c', { kind: 'custom', message: 'something odd', severity: 'warning', slotId: 'gen' }),
          signal('d', { message: 'request timed out: error', slotId: 'gen' }),
        ],
      ),
    );
    expect(found.flatMap((f) => f.signals.map((s) => s.id))).toEqual(['a', 'b']);
  });

  it('adds a retry as a guess, since the errors do not show they are transient', () => {
    expect(buildOnly(answer(errorRule, { slot: model }, [model]))).toEqual({
      patch: { maxRetries: 2 },
      description: 'Raise maxRetries from 1 to 2.',
      rationale: ERROR,
      guess: 'the errors do not show that they are transient, so retrying may not help',
    });
    expect(buildOnly(answer(errorRule, { slot: model }, [model]), {})).toMatchObject({
      guess:
        'the errors do not show that they are transient, so retrying may not help; maxRetries was not set, so the retries in force are unknown',
    });
  });
});
