import { beforeEach, describe, expect, it } from 'vitest';
import {
  ConflictError,
  NotFoundError,
  SynthesisFailure,
  ValidationError,
} from '../../../../lambdas/core/errors.ts';
import type { SynthesisRun } from '../../../../lambdas/core/schemas/runs.ts';
import { checkParent, reserveModelBudget } from '../../../../lambdas/core/use-cases/start-checks.ts';
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

describe("a refinement's parent, checked", () => {
  const evaluation = {
    cases: 2,
    evaluated: 2,
    base: { passed: 1, failed: 1 },
    candidate: { passed: 2, failed: 0 },
    fixed: ['exec-1'],
    regressed: [],
    durationMsDelta: null,
    costUsdDelta: null,
    updatedAt: '2025-06-20T09:00:00.000Z',
  };
  const parent = (id: string, fields: Partial<SynthesisRun> = {}) =>
    world.runs.seed({
      ...pendingRun({
        id,
        pipelineId: 'pipe-a',
        baseConfigurationId: 'c',
        createdAt: '2025-06-20T08:00:00.000Z',
      }),
      status: 'generated',
      evaluation,
      ...fields,
    });
  const check = (parentRunId: string, pipelineId = 'pipe-a') =>
    checkParent(world.runs, ada, pipelineId, parentRunId);

  it('places a refinement under its parent and the first run of the chain', async () => {
    parent('run_first____________');
    parent('run_second___________', { rootRunId: 'run_first____________' });
    expect(await check('run_first____________')).toEqual({
      parentRunId: 'run_first____________',
      rootRunId: 'run_first____________',
    });
    expect(await check('run_second___________')).toEqual({
      parentRunId: 'run_second___________',
      rootRunId: 'run_first____________',
    });
  });

  it('names what is wrong with a parent a refinement cannot start from', async () => {
    parent('run_approved_________', { status: 'approved' });
    parent('run_unevaluated______', { evaluation: { ...evaluation, evaluated: 0 } });
    const missing = await rejection(check('run_missing__________'));
    expect(missing).toBeInstanceOf(NotFoundError);
    expect(missing.message).toBe('Synthesis run run_missing__________ (parentRunId) does not exist.');
    const elsewhere = await rejection(check('run_approved_________', 'pipe-b'));
    expect(elsewhere).toBeInstanceOf(ValidationError);
    expect(elsewhere.message).toBe(
      "parentRunId names run run_approved_________ of pipeline pipe-a; a refinement's parent must be a run of pipeline pipe-b.",
    );
    expect(elsewhere).toMatchObject({
      details: [{ path: 'parentRunId', message: 'is a run of another pipeline' }],
    });
    const approved = await rejection(check('run_approved_________'));
    expect(approved).toBeInstanceOf(ConflictError);
    expect(approved.message).toBe(
      'Run run_approved_________ is approved; only a generated run can be refined. Start a run without parentRunId.',
    );
    const unevaluated = await rejection(check('run_unevaluated______'));
    expect(unevaluated).toBeInstanceOf(ConflictError);
    expect(unevaluated.message).toBe(
      'Run run_unevaluated______ has no evaluation yet: a refinement learns from it. Replay its cases first ' +
        '(pipeline-synthesis evaluate run_unevaluated______ --exec "<runner>"), then start the refinement.',
    );
  });
});

describe("reserving a run's model cost", () => {
  const run = (synthesisHandler: string) =>
    pendingRun({
      id: 'run_budget___________',
      pipelineId: 'pipe-a',
      baseConfigurationId: 'c',
      createdAt: '2025-06-20T08:00:00.000Z',
      synthesisHandler,
    });
  const deps = () => ({
    estimator: world.estimator,
    spend: world.spend,
    settings: world.settings,
    clock: world.clock,
  });

  it('reserves nothing for a run with no model cost, or none known', async () => {
    expect((await reserveModelBudget(deps(), run('heuristic-v1'))).estimatedCostUsd).toBe(0);
    world.estimator.estimate = async () => ({ model: null, promptTokens: 0, estimatedCostUsd: null });
    expect((await reserveModelBudget(deps(), run('claude-v1'))).estimatedCostUsd).toBeNull();
    expect(world.spend.months.size).toBe(0);
  });

  it("reserves the estimate in the run's month and gives it back when the run never starts", async () => {
    const reservation = await reserveModelBudget(deps(), run('claude-v1'));
    expect(reservation.estimatedCostUsd).toBe(0.05);
    expect(await world.spend.spent('team-a', '2025-06')).toBeCloseTo(0.05);
    await reservation.giveBack();
    expect(await world.spend.spent('team-a', '2025-06')).toBeCloseTo(0);
  });

  it('answers 409 when what the estimate needs is gone, and passes other failures on', async () => {
    world.estimator.estimate = async () => {
      throw new SynthesisFailure('Pipeline pipe-a no longer exists.');
    };
    const gone = await rejection(reserveModelBudget(deps(), run('claude-v1')));
    expect(gone).toBeInstanceOf(ConflictError);
    expect(gone.message).toBe('Pipeline pipe-a no longer exists.');
    world.estimator.estimate = async () => {
      throw new Error('pricing unavailable');
    };
    const failed = await rejection(reserveModelBudget(deps(), run('claude-v1')));
    expect(failed).not.toBeInstanceOf(ConflictError);
    expect(failed.message).toBe('pricing unavailable');
  });
});
