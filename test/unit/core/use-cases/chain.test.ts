import { describe, expect, it } from 'vitest';
import type { SynthesisRun } from '../../../../lambdas/core/schemas/runs.ts';
import { makeGetRunChain } from '../../../../lambdas/core/use-cases/chain.ts';
import { makeWorld, pendingRun, principal, rejection } from './fakes.ts';

const id = (name: string) => `${name}${'_'.repeat(21)}`.slice(0, 21);

function round(
  name: string,
  parent: string | null,
  heldOut: { fixed: number; regressed: number },
  changes: number,
): SynthesisRun {
  const run = pendingRun({
    id: id(name),
    pipelineId: 'p-1',
    baseConfigurationId: 'c-1',
    createdAt: `2025-06-01T10:0${name.length}:00.000Z`,
  });
  const cases = (prefix: string, count: number) =>
    Array.from({ length: count }, (_, index) => `${prefix}${index}`);
  return {
    ...run,
    status: 'generated',
    parentRunId: parent ? id(parent) : null,
    rootRunId: parent ? id('r') : null,
    changes: Array.from({ length: changes }, (_, index) => ({
      id: String(index + 1),
      slotId: 's',
      description: 'd',
      rationale: 'r',
      findingIds: ['1'],
      patch: { n: index },
    })),
    evaluation: {
      cases: 10,
      evaluated: 10,
      base: { passed: 5, failed: 5 },
      candidate: { passed: 5, failed: 5 },
      fixed: [],
      regressed: [],
      durationMsDelta: null,
      costUsdDelta: null,
      heldOut: {
        cases: 2,
        evaluated: 2,
        baseFailed: 2,
        fixed: cases('f', heldOut.fixed),
        regressed: cases('b', heldOut.regressed),
        stillFailing: [],
      },
      updatedAt: '2025-06-01T11:00:00.000Z',
    },
  };
}

describe("a run's chain", () => {
  it('lists the first run and its refinements with held-out figures, and names the best by held-out fixed minus broken, ties to fewer changes', async () => {
    const world = makeWorld();
    world.runs.seed(round('r', null, { fixed: 1, regressed: 0 }, 3));
    world.runs.seed(round('rr', 'r', { fixed: 3, regressed: 1 }, 3));
    world.runs.seed(round('rrr', 'rr', { fixed: 2, regressed: 0 }, 2));
    world.runs.seed(round('rrrr', 'rrr', { fixed: 2, regressed: 0 }, 3));
    const chain = await makeGetRunChain({ runs: world.runs })(principal(), id('rrr'));
    expect(chain.rootRunId).toBe(id('r'));
    expect(chain.runs.map((entry) => [entry.runId, entry.parentRunId, entry.heldOut?.fixed.length])).toEqual([
      [id('r'), null, 1],
      [id('rr'), id('r'), 3],
      [id('rrr'), id('rr'), 2],
      [id('rrrr'), id('rrr'), 2],
    ]);
    expect(chain.bestRunId).toBe(id('rrr'));
  });

  it('answers 404 for an unknown run and 403 for another team’s', async () => {
    const world = makeWorld();
    world.runs.seed(round('r', null, { fixed: 1, regressed: 0 }, 1));
    const get = makeGetRunChain({ runs: world.runs });
    expect((await rejection(get(principal(), id('zz')))).statusCode).toBe(404);
    expect((await rejection(get(principal({ teamId: 'team-b' }), id('r')))).statusCode).toBe(403);
  });
});
