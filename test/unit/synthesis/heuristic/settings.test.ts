/** The setting changes several rules share, and reading a numeric setting. */
import { describe, expect, it } from 'vitest';
import { appendInstruction, numberSetting } from '../../../../lambdas/synthesis/heuristic/settings.ts';

describe('numberSetting', () => {
  it('reads a finite number, and nothing else, as the setting in force', () => {
    expect(numberSetting({ timeoutMs: 30_000 }, 'timeoutMs')).toBe(30_000);
    expect(numberSetting({ timeoutMs: '30000' }, 'timeoutMs')).toBeUndefined();
    expect(numberSetting({ timeoutMs: Number.POSITIVE_INFINITY }, 'timeoutMs')).toBeUndefined();
    expect(numberSetting({}, 'timeoutMs')).toBeUndefined();
  });
});

describe('appendInstruction', () => {
  it('adds the sentence after the instructions, flagged as a guess only when told', () => {
    expect(appendInstruction('Answer in JSON.', 'why')({ instructions: 'Be brief.  ' })).toStrictEqual({
      patch: { instructions: 'Be brief.\n\nAnswer in JSON.' },
      description: 'Add to the instructions: "Answer in JSON."',
      rationale: 'why',
    });
    expect(appendInstruction('Answer in JSON.', 'why', 'a guess')({})).toStrictEqual({
      patch: { instructions: 'Answer in JSON.' },
      description: 'Add to the instructions: "Answer in JSON."',
      rationale: 'why',
      guess: 'a guess',
    });
  });
});
