/** Which slot a change patches: the finding's own when it fits, else the nearest fitting one. */
import { describe, expect, it } from 'vitest';
import {
  actionOn,
  callingSlot,
  isModelLike,
  isPromptLike,
  pickSlot,
} from '../../../../lambdas/synthesis/heuristic/slots.ts';
import { evidence, slot } from './fixtures.ts';

const m1 = slot('m1', 'model');
const p = slot('p', 'prompt');
const m2 = slot('m2', 'model');
const tool = slot('tool', 'tool', { maxTokens: 10 });
const bare = slot('bare', 'tool');

describe('slot kinds', () => {
  it('takes a model slot, or any slot with the setting, as model-like', () => {
    expect([m1, tool, bare].map(isModelLike('maxTokens'))).toEqual([true, true, false]);
  });

  it('takes a prompt slot, or any slot with instructions, as prompt-like', () => {
    expect([p, slot('x', 'tool', { instructions: 'y' }), bare].map(isPromptLike)).toEqual([
      true,
      true,
      false,
    ]);
  });
});

describe('pickSlot', () => {
  const fits = isModelLike('temperature');

  it('keeps the evidence slot when it fits', () => {
    expect(pickSlot([m1, p, m2], m2, fits, 'model')).toEqual({ slot: m2 });
  });

  it('takes the only fitting slot without calling it a guess', () => {
    expect(pickSlot([p, m1], p, fits, 'model')).toEqual({ slot: m1 });
    expect(pickSlot([p, bare], p, fits, 'model')).toBeUndefined();
  });

  it('takes the nearest of several, the earlier on a tie, as a guess', () => {
    expect(pickSlot([m1, p, m2], p, fits, 'model')).toEqual({
      slot: m1,
      slotGuess: 'the evidence names no single model slot; "m1" is the nearest of 2',
    });
    expect(pickSlot([m1, bare, p, m2], p, fits, 'model')?.slot).toBe(m2);
    expect(pickSlot([bare, m1, p, m2], p, fits, 'model')?.slot).toBe(m1);
    expect(pickSlot([bare, m1, p, bare, m2], undefined, fits, 'model')?.slot).toBe(m1);
  });
});

describe('callingSlot', () => {
  it('is the finding slot unless that is a prompt slot without the setting', () => {
    expect(callingSlot(evidence({ slot: bare }), [m1, bare], 'timeoutMs')).toEqual({ slot: bare });
    expect(callingSlot(evidence({ slot: p }), [m1, p], 'timeoutMs')).toEqual({ slot: m1 });
    const timed = slot('p', 'prompt', { timeoutMs: 1 });
    expect(callingSlot(evidence({ slot: timed }), [m1, timed], 'timeoutMs')).toEqual({ slot: timed });
    expect(callingSlot(evidence(), [bare, m1], 'timeoutMs')).toEqual({ slot: m1 });
  });
});

describe('actionOn', () => {
  it('is no action without a target', () => {
    const build = () => ({ skip: 'x' });
    expect(actionOn('a', undefined, build)).toEqual([]);
    expect(actionOn('a', { slot: m1, slotGuess: 'g' }, build)).toEqual([
      { name: 'a', slot: m1, slotGuess: 'g', build },
    ]);
  });
});
