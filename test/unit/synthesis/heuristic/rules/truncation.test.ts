/** The truncation rule: output cut off at the token limit → a larger maxTokens on the model slot. */
import { describe, expect, it } from 'vitest';
import { truncationRule } from '../../../../../lambdas/synthesis/heuristic/rules/truncation.ts';
import { answer, buildOnly, context, detect, evidence, signal, slot, slotRuns } from '../fixtures.ts';

const model = slot('gen', 'model', { maxTokens: 1024 });
const tool = slot('tool', 'tool');

describe('truncation rule', () => {
  it('finds truncation signals per slot, including one naming no slot', () => {
    const found = detect(
      truncationRule,
      context(
        [model],
        [
          signal('s1', { message: 'Output truncated', slotId: 'gen' }),
          signal('s2', { message: 'finish_reason: length' }),
          signal('s3', { message: 'request timed out', slotId: 'gen' }),
        ],
      ),
    );
    expect(found.map((f) => [f.slot?.id, f.signals.map((s) => s.id)])).toEqual([
      ['gen', ['s1']],
      [undefined, ['s2']],
    ]);
  });

  it('stands on run failures alone from 2 failures that are at least 10 % of the slot runs', () => {
    const [found] = detect(truncationRule, context([model], [], slotRuns('gen', 20, 2, 'hit max_tokens')));
    expect(found).toMatchObject({ slot: model, runFailures: 2, runs: 20, signals: [] });
    expect(found?.executions.map((run) => run.id)).toEqual(['gen-r0', 'gen-r1']);
    expect(detect(truncationRule, context([model], [], slotRuns('gen', 21, 2, 'hit max_tokens')))).toEqual(
      [],
    );
    expect(detect(truncationRule, context([model], [], slotRuns('gen', 5, 1, 'hit max_tokens')))).toEqual([]);
  });

  it('doubles maxTokens up to the cap, and names no guess', () => {
    expect(buildOnly(answer(truncationRule, { slot: model }, [model]))).toEqual({
      patch: { maxTokens: 2048 },
      description: 'Raise maxTokens from 1024 to 2048.',
      rationale: 'Output is cut off at the token limit; doubling the budget lets complete answers through.',
    });
    expect(buildOnly(answer(truncationRule, { slot: model }, [model]), { maxTokens: 20_000 })).toMatchObject({
      patch: { maxTokens: 32_768 },
    });
  });

  it('does not raise maxTokens at or past the cap', () => {
    expect(buildOnly(answer(truncationRule, { slot: model }, [model]), { maxTokens: 32_768 })).toEqual({
      skip: 'maxTokens is already 32768; shorter output must come from the prompt',
    });
  });

  it('sets a default maxTokens, as a guess, when none is set', () => {
    expect(buildOnly(answer(truncationRule, { slot: model }, [model]), {})).toEqual({
      patch: { maxTokens: 4_096 },
      description: 'Set maxTokens to 4096 (it was not set).',
      rationale:
        'Output is cut off at the token limit; an explicit, larger budget lets complete answers through.',
      guess: 'maxTokens was not set, so the limit in force is unknown',
    });
  });

  it('patches the model slot when a tool slot reports truncation, and claims its maxTokens', () => {
    const [action] = answer(truncationRule, { slot: tool }, [tool, model]);
    expect(action).toMatchObject({ name: 'raiseMaxTokens', slot: model });
    expect(truncationRule.raises?.(evidence({ slot: tool }), [tool, model])).toEqual({
      setting: 'maxTokens',
      slotId: 'gen',
    });
  });

  it('takes a slot that has maxTokens for a model, and says which of several it guessed', () => {
    const capped = slot('tool', 'tool', { maxTokens: 10 });
    expect(answer(truncationRule, { slot: undefined }, [capped])).toMatchObject([{ slot: capped }]);
    const [action] = answer(truncationRule, { slot: undefined }, [model, slot('gen-2', 'model')]);
    expect(action?.slotGuess).toBe('the evidence names no single model slot; "gen" is the nearest of 2');
  });

  it('proposes nothing and claims nothing when no slot takes maxTokens', () => {
    expect(answer(truncationRule, { slot: tool }, [tool])).toEqual([]);
    expect(truncationRule.raises?.(evidence({ slot: tool }), [tool])).toBeUndefined();
  });
});
