/** The format rule: malformed output → a lower temperature and a JSON-only instruction. */
import { describe, expect, it } from 'vitest';
import { FORMAT_INSTRUCTION, formatRule } from '../../../../../lambdas/synthesis/heuristic/rules/format.ts';
import { answer, context, detect, signal, slot } from '../fixtures.ts';

const model = slot('gen', 'model', { temperature: 0.7 });
const prompt = slot('prompt', 'prompt', { instructions: 'Be brief.' });
const [temperature, instruction] = answer(formatRule, { slot: model }, [prompt, model]);

describe('format rule', () => {
  it('finds parse and schema errors', () => {
    const found = detect(
      formatRule,
      context([model], [signal('a', { message: 'JSON parse error: unexpected token', slotId: 'gen' })]),
    );
    expect(found.map((f) => f.signals.map((s) => s.id))).toEqual([['a']]);
  });

  it('answers with the model slot temperature and the prompt slot instructions', () => {
    expect(temperature).toMatchObject({ name: 'temperature', slot: model });
    expect(instruction).toMatchObject({ name: 'formatInstruction', slot: prompt });
  });

  it('takes a slot that has a temperature for a model, and says which of several it guessed', () => {
    const sampler = slot('sampler', 'tool', { temperature: 1 });
    expect(answer(formatRule, { slot: undefined }, [prompt, sampler])).toMatchObject([
      { name: 'temperature', slot: sampler },
      { name: 'formatInstruction', slot: prompt },
    ]);
    const other = slot('prompt-2', 'prompt');
    const [guessed, guessedPrompt] = answer(formatRule, { slot: undefined }, [
      prompt,
      model,
      other,
      slot('gen-2', 'model'),
    ]);
    expect(guessed?.slotGuess).toBe('the evidence names no single model slot; "gen" is the nearest of 2');
    expect(guessedPrompt?.slotGuess).toBe(
      'the evidence names no single prompt slot; "prompt" is the nearest of 2',
    );
  });

  it('halves a temperature of 0.4 or more and sets a lower one to 0', () => {
    expect(temperature?.build({ temperature: 0.7 })).toEqual({
      patch: { temperature: 0.35 },
      description: 'Lower temperature from 0.7 to 0.35.',
      rationale:
        'Malformed output strays from the expected structure; a lower temperature makes it more predictable.',
    });
    expect(temperature?.build({ temperature: 0.4 })).toMatchObject({ patch: { temperature: 0.2 } });
    expect(temperature?.build({ temperature: 0.39 })).toMatchObject({ patch: { temperature: 0 } });
  });

  it('leaves a temperature that is 0 or not set', () => {
    expect(temperature?.build({ temperature: 0 })).toEqual({ skip: 'temperature is already 0' });
    expect(temperature?.build({})).toEqual({
      skip: 'temperature is not set, so lowering it is not a known change',
    });
  });

  it('appends the JSON-only instruction after a blank line, once', () => {
    expect(instruction?.build({ instructions: 'Be brief.  ' })).toEqual({
      patch: { instructions: `Be brief.\n\n${FORMAT_INSTRUCTION}` },
      description: `Add to the instructions: "${FORMAT_INSTRUCTION}"`,
      rationale: 'An explicit instruction to return only valid JSON reduces malformed output.',
    });
    expect(instruction?.build({ instructions: `x ${FORMAT_INSTRUCTION}` })).toEqual({
      skip: 'the instructions already say this',
    });
  });

  it('makes the instruction the whole text when there was none or only blanks', () => {
    expect(instruction?.build({ instructions: '  ' })).toMatchObject({
      patch: { instructions: FORMAT_INSTRUCTION },
    });
    expect(instruction?.build({})).toMatchObject({ patch: { instructions: FORMAT_INSTRUCTION } });
    expect(instruction?.build({ instructions: 3 })).toMatchObject({
      patch: { instructions: FORMAT_INSTRUCTION },
    });
  });
});
