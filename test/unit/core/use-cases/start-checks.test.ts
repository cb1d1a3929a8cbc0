import { beforeEach, describe, expect, it } from 'vitest';
import type { SynthesisRun } from '../../../../lambdas/core/schemas/runs.ts';
import { makeStartSynthesis } from '../../../../lambdas/core/use-cases/synthesis.ts';
import { makeWorld, pendingRun, principal, rejection, seedPipeline, type World } from './fakes.ts';

let world: World;
beforeEach(() => {
  world = makeWorld('2025-06-20T10:00:00.000Z');
});

const ada = principal();

function start() {
  return makeStartSynthesis({
    runs: world.runs,
    pipelines: world.pipelines,
    queue: world.queue,
    clock: world.clock,
    ids: world.ids,
    defaultHandler: 'heuristic-v1',
    idempotency: world.idempotency,
    quota: { store: world.quota, runsPerTeamPerHour: 1_000 },
    budget: { estimator: world.estimator, spend: world.spend, settings: world.settings, clock: world.clock },
  });
}

async function setBudget(usd: number | null) {
  const settings = await world.settings.get('team-a');
  world.settings.byTeam.set('team-a', { ...settings, modelBudgetUsdPerMonth: usd });
}

describe('the monthly model budget', () => {
  it('states the estimate on the run and refuses a run past the cap with a 429 naming the cap and the reset', async () => {
    const { pipeline } = await seedPipeline(world);
    await setBudget(0.08);
    const first = await start()(ada, pipeline.id, { synthesisHandler: 'claude-v1' });
    expect(first.estimatedCostUsd).toBe(0.05);
    const error = await rejection(start()(ada, pipeline.id, { synthesisHandler: 'claude-v1' }));
    expect(error).toMatchObject({ statusCode: 429, code: 'RATE_LIMITED' });
    expect(error.message).toContain('$0.08 a month');
    expect(error.message).toContain('2025-07-01T00:00:00.000Z');
    // Nothing of the refused run is stored or queued, and its estimate is not counted.
    expect(world.queue.sent).toHaveLength(1);
    expect(world.runs.runs.size).toBe(1);
    expect(await world.spend.spent('team-a', '2025-06')).toBeCloseTo(0.05);
    // heuristic-v1 costs nothing and still starts.
    const offline = await start()(ada, pipeline.id, { synthesisHandler: 'heuristic-v1' });
    expect(offline.estimatedCostUsd).toBe(0);
  });

  it('lets the runs start again in the next month, and any number with no cap', async () => {
    const { pipeline } = await seedPipeline(world);
    await setBudget(0.05);
    await start()(ada, pipeline.id, { synthesisHandler: 'claude-v1' });
    expect((await rejection(start()(ada, pipeline.id, { synthesisHandler: 'claude-v1' }))).statusCode).toBe(
      429,
    );
    world.clock.advance(11 * 86_400_000);
    await expect(start()(ada, pipeline.id, { synthesisHandler: 'claude-v1' })).resolves.toMatchObject({
      status: 'pending',
    });
    await setBudget(null);
    for (let i = 0; i < 3; i++) await start()(ada, pipeline.id, { synthesisHandler: 'claude-v1' });
    expect(world.queue.sent).toHaveLength(5);
  });
});

describe('starting a refinement', () => {
  const evaluated = (run: SynthesisRun): SynthesisRun => ({
    ...run,
    status: 'generated',
    evaluation: {
      cases: 2,
      evaluated: 2,
      base: { passed: 1, failed: 1 },
      candidate: { passed: 2, failed: 0 },
      fixed: ['exec-1'],
      regressed: [],
      durationMsDelta: null,
      costUsdDelta: null,
      updatedAt: '2025-06-20T09:00:00.000Z',
    },
  });

  it('records the parent and the chain’s first run, down the chain', async () => {
    const { pipeline, configuration } = await seedPipeline(world);
    const base = {
      pipelineId: pipeline.id,
      baseConfigurationId: configuration.id,
      createdAt: '2025-06-20T08:00:00.000Z',
    };
    world.runs.seed(evaluated(pendingRun({ ...base, id: 'run_root_____________' })));
    const child = await start()(ada, pipeline.id, { parentRunId: 'run_root_____________' });
    expect(child).toMatchObject({ parentRunId: 'run_root_____________', rootRunId: 'run_root_____________' });
    world.runs.seed(evaluated(child));
    const grandchild = await start()(ada, pipeline.id, { parentRunId: child.id });
    expect(grandchild).toMatchObject({ parentRunId: child.id, rootRunId: 'run_root_____________' });
    expect((await world.runs.listChain('run_root_____________')).map((run) => run.id)).toEqual([
      'run_root_____________',
      child.id,
      grandchild.id,
    ]);
  });

  it('refuses a parent that is not evaluated, not generated, of another pipeline or missing', async () => {
    const { pipeline, configuration } = await seedPipeline(world);
    const other = await seedPipeline(world);
    const base = {
      pipelineId: pipeline.id,
      baseConfigurationId: configuration.id,
      createdAt: '2025-06-20T08:00:00.000Z',
    };
    world.runs.seed({ ...pendingRun({ ...base, id: 'run_unevaluated______' }), status: 'generated' });
    world.runs.seed(pendingRun({ ...base, id: 'run_pending__________' }));
    world.runs.seed(evaluated(pendingRun({ ...base, id: 'run_evaluated________' })));
    const unevaluated = await rejection(start()(ada, pipeline.id, { parentRunId: 'run_unevaluated______' }));
    expect(unevaluated).toMatchObject({ statusCode: 409 });
    expect(unevaluated.message).toContain('no evaluation');
    expect(
      await rejection(start()(ada, pipeline.id, { parentRunId: 'run_pending__________' })),
    ).toMatchObject({
      statusCode: 409,
    });
    expect(
      await rejection(start()(ada, other.pipeline.id, { parentRunId: 'run_evaluated________' })),
    ).toMatchObject({
      statusCode: 400,
    });
    expect(
      await rejection(start()(ada, pipeline.id, { parentRunId: 'run_missing__________' })),
    ).toMatchObject({
      statusCode: 404,
    });
    expect(world.queue.sent).toHaveLength(0);
  });
});
