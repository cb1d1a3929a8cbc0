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

describe("a chain's rounds and its best run", () => {
  /** A round whose whole set fixed `fixed` and broke `regressed`, held-out as given. */
  const scored = (
    name: string,
    fields: { fixed: number; regressed: number; heldOut?: { fixed: number; regressed: number } },
    changes = 2,
  ): SynthesisRun => {
    const run = round(name, name === 'r' ? null : 'r', fields.heldOut ?? { fixed: 0, regressed: 0 }, changes);
    if (!run.evaluation) throw new Error('evaluated');
    const list = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix}${i}`);
    run.evaluation = {
      ...run.evaluation,
      fixed: list('x', fields.fixed),
      regressed: list('y', fields.regressed),
    };
    return run;
  };
  const chainOf = async (...runs: SynthesisRun[]) => {
    const world = makeWorld();
    for (const run of runs) world.runs.seed(run);
    return makeGetRunChain({ runs: world.runs })(principal(), id('r'));
  };

  it("shows each round's figures, and zeros and nulls for a round not evaluated", async () => {
    const evaluated = scored('r', { fixed: 3, regressed: 1 });
    if (evaluated.evaluation) {
      evaluated.evaluation.recommendation = { changeIds: ['1'], text: 'Approve change 1.' };
    }
    const bare = { ...round('rr', 'r', { fixed: 0, regressed: 0 }, 1), evaluation: null };
    const chain = await chainOf(evaluated, bare);
    expect(chain.runs[0]).toMatchObject({
      evaluated: 10,
      fixed: 3,
      regressed: 1,
      heldOut: expect.objectContaining({ fixed: [], regressed: [] }),
      recommendation: { changeIds: ['1'], text: 'Approve change 1.' },
      changeCount: 2,
    });
    expect(chain.runs[1]).toMatchObject({
      evaluated: 0,
      fixed: 0,
      regressed: 0,
      heldOut: null,
      recommendation: null,
      changeCount: 1,
    });
    expect(chain.bestRunId).toBe(id('r'));
  });

  it("breaks a held-out tie by the whole set's fixed minus broken, then fewer changes, then the earliest", async () => {
    const tie = { heldOut: { fixed: 1, regressed: 0 } };
    let chain = await chainOf(
      scored('r', { fixed: 2, regressed: 1, ...tie }),
      scored('rr', { fixed: 4, regressed: 2, ...tie }),
      scored('rrr', { fixed: 5, regressed: 4, ...tie }),
    );
    expect(chain.bestRunId).toBe(id('rr'));
    chain = await chainOf(
      scored('r', { fixed: 2, regressed: 0, ...tie }, 3),
      scored('rr', { fixed: 2, regressed: 0, ...tie }, 2),
      scored('rrr', { fixed: 2, regressed: 0, ...tie }, 2),
    );
    expect(chain.bestRunId).toBe(id('rr'));
    // Fewer changes decide only between rounds whose figures are the same.
    chain = await chainOf(
      scored('r', { fixed: 2, regressed: 0, ...tie }, 3),
      scored('rr', { fixed: 1, regressed: 0, ...tie }, 1),
    );
    expect(chain.bestRunId).toBe(id('r'));
    // Held-out figures count before the whole set's.
    chain = await chainOf(
      scored('r', { fixed: 9, regressed: 0, heldOut: { fixed: 1, regressed: 1 } }),
      scored('rr', { fixed: 0, regressed: 3, heldOut: { fixed: 1, regressed: 0 } }),
    );
    expect(chain.bestRunId).toBe(id('rr'));
  });

  it('names no best run among rounds not generated or not evaluated', async () => {
    const approved = { ...scored('r', { fixed: 5, regressed: 0 }), status: 'approved' as const };
    const unevaluated = scored('rr', { fixed: 5, regressed: 0 });
    if (unevaluated.evaluation) unevaluated.evaluation.evaluated = 0;
    const chain = await chainOf(approved, unevaluated);
    expect(chain.runs).toHaveLength(2);
    expect(chain.bestRunId).toBeNull();
  });

  it('shows the run alone while its chain lists nothing yet, and names an unknown run', async () => {
    const world = makeWorld();
    const run = scored('r', { fixed: 1, regressed: 0 });
    world.runs.seed(run);
    world.runs.listChain = async () => [];
    const chain = await makeGetRunChain({ runs: world.runs })(principal(), id('r'));
    expect(chain).toMatchObject({ rootRunId: id('r'), bestRunId: id('r') });
    expect(chain.runs.map((entry) => entry.runId)).toEqual([id('r')]);
    const missing = await rejection(makeGetRunChain({ runs: world.runs })(principal(), id('zz')));
    expect(missing.message).toBe(`Synthesis run ${id('zz')} does not exist.`);
  });
});
