/** The draft's limits at their edges, and the errors a model is shown when its ids are out of order. */
import { describe, expect, it } from 'vitest';
import { LIMITS } from '../../../lambdas/core/schemas/common.ts';
import { type SynthesisDraft, synthesisDraftSchema } from '../../../lambdas/synthesis/draft.ts';

const draftWith = (changes: SynthesisDraft['changes'], findingIds: string[] = ['1']): SynthesisDraft => ({
  diagnosis: {
    summary: 'The generator times out.',
    findings: findingIds.map((id) => ({ id, description: 'Timeouts.', signalRefs: [1] })),
  },
  changes,
  warnings: [],
});

const change = (id: string, patch: Record<string, unknown> = { timeoutMs: 60_000 }) => ({
  id,
  slotId: 'generator',
  description: 'Raise the timeout.',
  rationale: 'Slow calls need more time.',
  findingIds: ['1'],
  patch,
});

/** A patch whose JSON is exactly `length` characters long. */
const patchOfLength = (length: number) => {
  const overhead = JSON.stringify({ instructions: '' }).length;
  const patch = { instructions: 'x'.repeat(length - overhead) };
  expect(JSON.stringify(patch)).toHaveLength(length);
  return patch;
};

describe('synthesisDraftSchema limits', () => {
  it('accepts a patch of exactly the settings limit and refuses one a character longer', () => {
    const atLimit = synthesisDraftSchema.safeParse(
      draftWith([change('1', patchOfLength(LIMITS.settingsBytes))]),
    );
    const over = synthesisDraftSchema.safeParse(
      draftWith([change('1', patchOfLength(LIMITS.settingsBytes + 1))]),
    );

    expect(atLimit.success).toBe(true);
    expect(over.success).toBe(false);
    expect(over.error?.issues).toEqual([
      expect.objectContaining({
        path: ['changes', 0, 'patch'],
        message: 'must serialize to at most 16000 bytes',
      }),
    ]);
  });

  it('tells the model which change id is out of order and what it should have been', () => {
    const result = synthesisDraftSchema.safeParse(draftWith([change('1'), change('3')]));

    expect(result.success).toBe(false);
    expect(result.error?.issues.map(({ path, message }) => ({ path, message }))).toEqual([
      {
        path: ['changes', 1, 'id'],
        message: 'changes ids must be "1", "2", … in order; expected "2", got "3"',
      },
    ]);
  });

  it('tells the model which finding id is out of order, and reports every one', () => {
    const result = synthesisDraftSchema.safeParse(draftWith([], ['2', '1']));

    expect(result.error?.issues.map(({ path, message }) => ({ path, message }))).toEqual([
      {
        path: ['diagnosis', 'findings', 0, 'id'],
        message: 'findings ids must be "1", "2", … in order; expected "1", got "2"',
      },
      {
        path: ['diagnosis', 'findings', 1, 'id'],
        message: 'findings ids must be "1", "2", … in order; expected "2", got "1"',
      },
    ]);
  });
});
