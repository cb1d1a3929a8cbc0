import { describe, expect, it } from 'vitest';
import type { Configuration } from '../../../../lambdas/core/schemas/pipelines.ts';
import type { Change } from '../../../../lambdas/core/schemas/runs.ts';
import { applyChanges, rebaseConflicts } from '../../../../lambdas/core/use-cases/rebase.ts';

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
