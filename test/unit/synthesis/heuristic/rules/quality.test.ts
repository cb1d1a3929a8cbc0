/** The quality rule: bad feedback or low scores → an instruction to keep to the input, as a guess. */
import { describe, expect, it } from 'vitest';
import {
  isLowScore,
  QUALITY_INSTRUCTION,
  qualityRule,
} from '../../../../../lambdas/synthesis/heuristic/rules/quality.ts';
import { answer, buildOnly, context, detect, signal, slot } from '../fixtures.ts';

const prompt = slot('prompt', 'prompt', { instructions: 'Be brief.' });

describe('quality rule', () => {
  it('reads a score on its 0–1, 0–5, 0–10 or 0–100 scale and calls below half low', () => {
    expect([0.49, 0.5, 1, 2, 2.5, 4.9, 6, 10, 49, 50].map(isLowScore)).toEqual([
      true,
      false,
      false,
      true,
      false,
      false,
      false,
      false,
      true,
      false,
    ]);
  });

  it('counts an info score only when it is low, and any warning feedback', () => {
    const score = (id: string, value: number) =>
      signal(id, { kind: 'eval', message: 'eval score', severity: 'info', value });
    const found = detect(
      qualityRule,
      context(
        [prompt],
        [score('low', 0.2), score('high', 0.9), signal('w', { kind: 'feedback', message: 'thumbs down' })],
      ),
    );
    expect(found.map((f) => f.signals.map((s) => s.id))).toEqual([['low', 'w']]);
  });

  it('describes the mean score, to two decimals', () => {
    expect(qualityRule.describeReadings?.([1, 2, 4])).toBe('mean score 2.33');
  });

  it('says which of several prompt slots it guessed', () => {
    const [action] = answer(qualityRule, { slot: undefined }, [prompt, slot('p2', 'prompt')]);
    expect(action?.slotGuess).toBe('the evidence names no single prompt slot; "prompt" is the nearest of 2');
  });

  it('adds the grounding instruction to the prompt slot, as a guess', () => {
    const actions = answer(qualityRule, { slot: undefined }, [slot('gen', 'model'), prompt]);
    expect(actions).toMatchObject([{ name: 'qualityInstruction', slot: prompt }]);
    expect(buildOnly(actions)).toEqual({
      patch: { instructions: `Be brief.\n\n${QUALITY_INSTRUCTION}` },
      description: `Add to the instructions: "${QUALITY_INSTRUCTION}"`,
      rationale:
        'Users or evals flag poor answers; a stricter instruction keeps the model to what the input supports.',
      guess: 'the signals say answers are poor, not why; a generic instruction may not address the cause',
    });
  });
});
