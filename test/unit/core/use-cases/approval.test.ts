import { beforeEach, describe, expect, it } from 'vitest';
import { ConflictError } from '../../../../lambdas/core/errors.ts';
import type { DomainEvent } from '../../../../lambdas/core/events.ts';
import type { ApprovalPlan } from '../../../../lambdas/core/ports/review.ts';
import type { RunRepository } from '../../../../lambdas/core/ports/runs.ts';
import type { Configuration, Pipeline, Slot } from '../../../../lambdas/core/schemas/pipelines.ts';
import { APPROVAL_RULE_DEFAULTS } from '../../../../lambdas/core/schemas/review.ts';
import type { Change, SynthesisRun } from '../../../../lambdas/core/schemas/runs.ts';
import {
  type ApproveDeps,
  DEFAULT_ROLLOUT_MIN_EXECUTIONS,
  makeApproveRun,
} from '../../../../lambdas/core/use-cases/approval.ts';
import { applyChanges } from '../../../../lambdas/core/use-cases/rebase.ts';
import { makeWorld, pendingRun, principal, rejection, seedPipeline, type World } from './fakes.ts';

const T0 = '2025-06-02T10:00:00.000Z';
const ada = principal();

const CHANGES: Change[] = [
  {
    id: 'c1',
    slotId: 'model',
    description: 'cooler',
    rationale: 'r',
    findingIds: [],
    patch: { temperature: 0.2 },
  },
  {
    id: 'c2',
    slotId: 'prompt',
    description: 'terser',
    rationale: 'r',
    findingIds: [],
    patch: { template: 'Brief: {{input}}' },
  },
];

let world: World;
let pipeline: Pipeline;
let base: Configuration;
/** What approve was asked to write: the decision, the plan and the events. */
/** The world, with a runs table recording what approve is asked to write. */
let deps: ApproveDeps;
let written: Array<{ decision: { at: string; by: string }; plan: ApprovalPlan; events: DomainEvent[] }>;

beforeEach(async () => {
  world = makeWorld(T0);
  ({ pipeline, configuration: base } = await seedPipeline(world));
  written = [];
  const approve = world.runs.approve.bind(world.runs);
  const recording: RunRepository['approve'] = async (run, decision, plan, events) => {
    written.push({ decision, plan, events });
    // The fake writes activations only; a rollout's approval is checked by what it was asked to write.
    return plan.activation ? approve(run, decision, plan) : { ...run, status: 'approved' };
  };
  deps = { ...world, runs: Object.assign(Object.create(world.runs), { approve: recording }) };
});

/** A generated run proposing CHANGES on `base`, its proposal stored as the next version. */
function seedRun(): { run: SynthesisRun; proposed: Configuration } {
  const id = world.ids.newId();
  const proposed = world.pipelines.putConfiguration({
    id: world.ids.newId(),
    pipelineId: pipeline.id,
    slots: applyChanges(base.slots, CHANGES),
    source: 'synthesis',
    synthesisRunId: id,
    createdAt: T0,
    createdBy: 'user-ada',
  });
  const run = pendingRun({
    id,
    pipelineId: pipeline.id,
    baseConfigurationId: base.id,
    createdAt: T0,
    status: 'generated',
    generationStartedAt: T0,
    generationCompletedAt: T0,
    proposedConfigurationId: proposed.id,
    changes: CHANGES,
  });
  world.runs.seed(run);
  return { run, proposed };
}

/** Makes `slots` the pipeline's active configuration, as a manual activation would. */
function activateManual(slots: Slot[]): Configuration {
  const configuration = world.pipelines.putConfiguration({
    id: world.ids.newId(),
    pipelineId: pipeline.id,
    slots,
    source: 'manual',
    createdAt: T0,
    createdBy: 'user-ada',
  });
  const entry = world.pipelines.pipelines.get(pipeline.id);
  if (entry) entry.pipeline.activeConfigurationId = configuration.id;
  return configuration;
}

const withSetting = (slotId: string, key: string, value: unknown): Slot[] =>
  base.slots.map((slot) =>
    slot.id === slotId ? { ...slot, settings: { ...slot.settings, [key]: value } } : slot,
  );

describe('approving a run (what is written)', () => {
  it('applies the proposal as it is when every change is approved on its base: no new version', async () => {
    const { run, proposed } = seedRun();
    const approved = await makeApproveRun(deps)(ada, run.id);
    expect(approved.appliedConfigurationId).toBe(proposed.id);
    expect(approved.approvedChangeIds).toEqual(['c1', 'c2']);
    const [{ plan, events }] = written as [(typeof written)[number]];
    expect(plan.newConfiguration).toBeNull();
    expect(plan.serving).toEqual({
      pipelineId: pipeline.id,
      teamId: 'team-a',
      active: proposed,
      rollout: null,
    });
    expect(events.map((event) => event.type)).toEqual(['synthesis_run.approved', 'configuration.activated']);
    expect(events[0]?.data).toMatchObject({
      runId: run.id,
      status: 'approved',
      configurationId: proposed.id,
    });
  });

  it('stores a new version holding only the chosen changes, naming them', async () => {
    const { run, proposed } = seedRun();
    const approved = await makeApproveRun(deps)(ada, run.id, { changeIds: ['c2'] });
    const made = written[0]?.plan.newConfiguration;
    expect(made).toEqual({
      id: expect.any(String),
      pipelineId: pipeline.id,
      version: 3,
      slots: applyChanges(base.slots, [CHANGES[1] as Change]),
      source: 'synthesis',
      synthesisRunId: run.id,
      appliedChangeIds: ['c2'],
      createdAt: T0,
      createdBy: 'user-ada',
    });
    expect(made?.id).not.toBe(proposed.id);
    expect(approved.approvedChangeIds).toEqual(['c2']);
    expect(approved.appliedConfigurationId).toBe(made?.id);
    expect((await world.pipelines.getPipeline(pipeline.id))?.activeConfigurationId).toBe(made?.id);
    expect((await world.pipelines.getServingState(pipeline.id))?.active.id).toBe(made?.id);
  });

  it('is a 409 while a rollout is active, and writes nothing', async () => {
    const { run } = seedRun();
    const entry = world.pipelines.pipelines.get(pipeline.id);
    if (entry) {
      entry.pipeline.rollout = {
        id: 'ro-1',
        pipelineId: pipeline.id,
        synthesisRunId: 'r0',
        baseConfigurationId: base.id,
        candidateConfigurationId: base.id,
        percent: 10,
        minExecutions: 200,
        autoPromote: false,
        autoRollback: true,
        status: 'active',
        startedAt: T0,
        startedBy: 'user-ada',
        endedAt: null,
        endedBy: null,
        endReason: null,
      };
    }
    const error = await rejection(makeApproveRun(deps)(ada, run.id));
    expect(error).toBeInstanceOf(ConflictError);
    expect(error.message).toBe(
      'Rollout ro-1 is active on this pipeline: promote it or roll it back before approving another run.',
    );
    expect(written).toEqual([]);
  });

  it('is a 409 saying how to rebase when the base is no longer active, and writes nothing', async () => {
    const { run } = seedRun();
    const active = activateManual(withSetting('model', 'maxTokens', 64));
    const error = await rejection(makeApproveRun(deps)(ada, run.id));
    expect(error).toBeInstanceOf(ConflictError);
    expect(error.message).toBe(
      `The pipeline's active configuration is no longer ${base.id}, the base of this run; nothing was changed. ` +
        'Approve with "rebase": true to apply the chosen changes on top of the active configuration, or start a new synthesis run.',
    );
    expect(written).toEqual([]);
    expect((await world.pipelines.getPipeline(pipeline.id))?.activeConfigurationId).toBe(active.id);
  });

  it('with rebase, applies the changes on top of the active configuration as a new version', async () => {
    const { run } = seedRun();
    const active = activateManual(withSetting('model', 'maxTokens', 64));
    const approved = await makeApproveRun(deps)(ada, run.id, { rebase: true });
    const made = written[0]?.plan.newConfiguration;
    expect(made?.slots).toEqual(applyChanges(active.slots, CHANGES));
    expect(made?.appliedChangeIds).toEqual(['c1', 'c2']);
    expect(approved.appliedConfigurationId).toBe(made?.id);
    expect(written[0]?.plan.activation).toMatchObject({
      previousConfigurationId: active.id,
      previousVersion: active.version,
      configurationId: made?.id,
    });
  });

  it('with rebase, is a 409 naming each conflicting setting when the active one moved it', async () => {
    const { run } = seedRun();
    const active = activateManual(withSetting('model', 'temperature', 0.9));
    const error = await rejection(makeApproveRun(deps)(ada, run.id, { rebase: true }));
    expect(error).toBeInstanceOf(ConflictError);
    expect(error.message).toBe(
      `The changes cannot be rebased onto version ${active.version}: model.temperature was 0.7 in the run's base, is 0.9 now and would become 0.2. Nothing was changed.`,
    );
    expect((error as ConflictError).details).toEqual({
      conflicts: [{ slotId: 'model', key: 'temperature', base: 0.7, active: 0.9, proposed: 0.2 }],
    });
    expect(written).toEqual([]);
  });

  it('with a rollout, starts it with the defaults on the base and serves the candidate to its share', async () => {
    const { run, proposed } = seedRun();
    await makeApproveRun(deps)(ada, run.id, { rollout: { percent: 20 } });
    const [{ plan, events }] = written as [(typeof written)[number]];
    expect(plan.activation).toBeNull();
    expect(plan.rollout).toEqual({
      id: expect.any(String),
      pipelineId: pipeline.id,
      synthesisRunId: run.id,
      baseConfigurationId: base.id,
      candidateConfigurationId: proposed.id,
      percent: 20,
      // Without guardrails: the failure rate at its default threshold.
      guardrails: [{ metric: 'failure_rate' }],
      minExecutions: DEFAULT_ROLLOUT_MIN_EXECUTIONS,
      autoPromote: false,
      autoRollback: true,
      status: 'active',
      startedAt: T0,
      startedBy: 'user-ada',
      endedAt: null,
      endedBy: null,
      endReason: null,
    });
    const rolloutId = plan.rollout?.id;
    expect(plan.serving).toEqual({
      pipelineId: pipeline.id,
      teamId: 'team-a',
      active: base,
      rollout: { id: rolloutId, percent: 20, candidate: proposed },
    });
    expect(events.map((event) => event.type)).toEqual(['synthesis_run.approved', 'rollout.started']);
    expect(events[1]).toEqual({
      id: `evt_${rolloutId}_rollout_started`,
      type: 'rollout.started',
      timestamp: T0,
      data: {
        teamId: 'team-a',
        pipelineId: pipeline.id,
        runId: run.id,
        rolloutId,
        configurationId: proposed.id,
        status: 'active',
        percent: 20,
        actor: expect.anything(),
      },
    });
  });

  it('with a rollout, keeps the settings named', async () => {
    const { run } = seedRun();
    await makeApproveRun(deps)(ada, run.id, {
      rollout: { percent: 50, minExecutions: 40, autoPromote: true, autoRollback: false },
    });
    expect(written[0]?.plan.rollout).toMatchObject({
      percent: 50,
      minExecutions: 40,
      autoPromote: true,
      autoRollback: false,
    });
  });
  it('refuses an API token where the rules require a person, saying a person must approve', async () => {
    const { run } = seedRun();
    world.approvalRules.rules.set(pipeline.id, {
      ...APPROVAL_RULE_DEFAULTS,
      allowApiTokens: false,
      pipelineId: pipeline.id,
      updatedAt: T0,
      updatedBy: 'user-root',
    });
    const error = await rejection(makeApproveRun(deps)(ada, run.id));
    expect(error.statusCode).toBe(403);
    expect(error.message).toContain('require a person to approve: sign in');
    expect(written).toEqual([]);
  });
  it("judges maxRegressions on the chosen changes' own arms: leaving out the breaking one approves, the 409 says the basis", async () => {
    const { run } = seedRun();
    // Together the changes broke x; alone, c1 broke x and c2 broke nothing.
    world.runs.seed({
      ...run,
      evaluation: {
        cases: 4,
        evaluated: 4,
        base: { passed: 3, failed: 1 },
        candidate: { passed: 3, failed: 1 },
        fixed: ['a'],
        regressed: ['x'],
        durationMsDelta: null,
        costUsdDelta: null,
        changes: [
          { changeId: 'c1', evaluated: 4, fixed: [], fixedCount: 0, broken: ['x'], brokenCount: 1 },
          { changeId: 'c2', evaluated: 4, fixed: ['a'], fixedCount: 1, broken: [], brokenCount: 0 },
        ],
        updatedAt: T0,
      },
    });
    world.approvalRules.rules.set(pipeline.id, {
      ...APPROVAL_RULE_DEFAULTS,
      pipelineId: pipeline.id,
      updatedAt: T0,
      updatedBy: 'user-root',
    });
    const whole = await rejection(makeApproveRun(deps)(ada, run.id));
    expect(whole.statusCode).toBe(409);
    expect(whole.message).toContain(
      '1 case(s) regressed, judged on the whole candidate (every change together)',
    );
    expect((whole as ConflictError).details).toMatchObject({
      rules: ['maxRegressions'],
      regressions: { basis: 'candidate', changeIds: ['c1', 'c2'], regressed: 1 },
    });
    const breaking = await rejection(makeApproveRun(deps)(ada, run.id, { changeIds: ['c1'] }));
    expect((breaking as ConflictError).details).toMatchObject({
      regressions: { basis: 'chosen_changes', changeIds: ['c1'], regressed: 1 },
    });
    expect(written).toEqual([]);

    const approved = await makeApproveRun(deps)(ada, run.id, { changeIds: ['c2'] });
    expect(approved.approvedChangeIds).toEqual(['c2']);
    expect(approved.status).toBe('approved');
  });
  it('with rebase, names every conflict, separated', async () => {
    const { run } = seedRun();
    const moved = withSetting('model', 'temperature', 0.9).map((slot) =>
      slot.id === 'prompt' ? { ...slot, settings: { ...slot.settings, template: 'Other {{input}}' } } : slot,
    );
    activateManual(moved);
    const error = await rejection(makeApproveRun(deps)(ada, run.id, { rebase: true }));
    expect(error.message).toMatch(/would become 0\.2; prompt\.template was /);
  });
});
