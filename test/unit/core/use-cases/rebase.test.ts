import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../../../lambdas/core/errors.ts';
import type { Configuration } from '../../../../lambdas/core/schemas/pipelines.ts';
import type { Change, SynthesisRun } from '../../../../lambdas/core/schemas/runs.ts';
import {
  applyChanges,
  chooseChanges,
  describeConflict,
  rebaseConflicts,
} from '../../../../lambdas/core/use-cases/rebase.ts';

const configuration = (
  id: string,
  model: Record<string, unknown>,
  extra: Configuration['slots'] = [],
): Configuration => ({
  id,
  pipelineId: 'p',
  version: 1,
  slots: [{ id: 'model', name: 'Model', kind: 'model', settings: model }, ...extra],
  source: 'manual',
  createdAt: '2026-01-01T00:00:00.000Z',
  createdBy: 'u',
});

const change = (id: string, patch: Record<string, unknown>, slotId = 'model'): Change => ({
  id,
  slotId,
  description: 'd',
  rationale: 'r',
  findingIds: [],
  patch,
});

describe('rebasing chosen changes onto the active configuration', () => {
  const base = configuration('base', { maxTokens: 256, temperature: 0.9 });

  it('has no conflict when the key kept its base value or already holds the proposed one', () => {
    const changes = [change('1', { maxTokens: 512 }), change('2', { temperature: 0.2 })];
    const active = configuration('active', { maxTokens: 512, temperature: 0.9, topP: 0.5 });
    expect(rebaseConflicts(base, active, changes)).toEqual([]);
    expect(applyChanges(active.slots, changes)[0]?.settings).toEqual({
      maxTokens: 512,
      temperature: 0.2,
      topP: 0.5,
    });
  });

  it('names every key that moved elsewhere, and a slot that is gone, with base, active and proposed', () => {
    const changes = [
      change('1', { maxTokens: 512, temperature: null }),
      change('2', { topK: 4 }, 'retrieve'),
    ];
    const active = configuration('active', { maxTokens: 1024, temperature: 0.9 });
    expect(
      rebaseConflicts(
        configuration('base', { maxTokens: 256, temperature: 0.9 }, [
          { id: 'retrieve', name: 'R', kind: 'retrieval', settings: { topK: 8 } },
        ]),
        active,
        changes,
      ),
    ).toEqual([
      { slotId: 'model', key: 'maxTokens', base: 256, active: 1024, proposed: 512 },
      { slotId: 'retrieve', key: 'topK', base: 8, active: null, proposed: 4 },
    ]);
  });

  it('applies only the chosen patches, in the run order, leaving other slots as they are', () => {
    const twoSlots = configuration('c', { maxTokens: 256 }, [
      { id: 'retrieve', name: 'R', kind: 'retrieval', settings: { topK: 8 } },
    ]);
    const slots = applyChanges(twoSlots.slots, [
      change('1', { maxTokens: 512 }),
      change('3', { maxTokens: 1024 }),
    ]);
    expect(slots.map((slot) => slot.settings)).toEqual([{ maxTokens: 1024 }, { topK: 8 }]);
    expect(twoSlots.slots[0]?.settings).toEqual({ maxTokens: 256 });
  });
});

describe('choosing the changes a reviewer names', () => {
  const runWith = (changes: Change[]) => ({ changes }) as unknown as SynthesisRun;
  const run = runWith([change('c1', { a: 1 }), change('c2', { b: 2 }), change('c3', { c: 3 })]);

  it('takes every change when none is named, and the named ones in the run order otherwise', () => {
    expect(chooseChanges(run, undefined).map((c) => c.id)).toEqual(['c1', 'c2', 'c3']);
    expect(chooseChanges(run, ['c3', 'c1']).map((c) => c.id)).toEqual(['c1', 'c3']);
    expect(chooseChanges(run, [])).toEqual([]);
  });

  it("answers a 400 naming the unknown ids and the run's own", () => {
    const refusal = (() => {
      try {
        chooseChanges(run, ['c2', 'c9', 'x']);
      } catch (error) {
        return error;
      }
    })();
    expect(refusal).toBeInstanceOf(ValidationError);
    expect((refusal as ValidationError).message).toBe(
      'The run has no change c9, x; its changes are c1, c2, c3.',
    );
    expect((refusal as ValidationError).details).toEqual([
      { path: 'changeIds', message: 'unknown change ids: c9, x' },
    ]);
    expect(() => chooseChanges(runWith([]), ['c1'])).toThrow(
      'The run has no change c1; its changes are none.',
    );
  });
});

describe('a rebase conflict', () => {
  it('names a key once however many chosen changes set it', () => {
    const base = configuration('base', { maxTokens: 256 });
    const active = configuration('active', { maxTokens: 1024 });
    const changes = [change('1', { maxTokens: 512 }), change('2', { maxTokens: 768 })];
    expect(rebaseConflicts(base, active, changes)).toEqual([
      { slotId: 'model', key: 'maxTokens', base: 256, active: 1024, proposed: 768 },
    ]);
  });

  it('names a slot neither the base nor the active configuration has, with null for both', () => {
    const base = configuration('base', { maxTokens: 256 });
    expect(rebaseConflicts(base, base, [change('1', { topK: 4 }, 'rerank')])).toEqual([
      { slotId: 'rerank', key: 'topK', base: null, active: null, proposed: null },
    ]);
  });

  it('reads as the key with its base, active and proposed values', () => {
    expect(describeConflict({ slotId: 'model', key: 'stop', base: ['a'], active: null, proposed: 'b' })).toBe(
      'model.stop was ["a"] in the run\'s base, is null now and would become "b"',
    );
  });
});
