/**
 * The measured effect of an approval against an in-memory recording index: which executions each
 * arm counts (before against after, or a rollout's arms), the 409s and 404s a caller gets, and how
 * a measurement keeps its state and reads only what was recorded since (the kept answer when
 * nothing changed, records leaving the retention window, a rollout's exact counts).
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { ConflictError, NotFoundError } from '../../../../lambdas/core/errors.ts';
import type { KeptEffect, RolloutRepository } from '../../../../lambdas/core/ports/rollouts.ts';
import type { ArmCounts } from '../../../../lambdas/core/rollouts/effect.ts';
import {
  type ArmWindow,
  inWindow,
  type RecordedExecution,
  type RecordedSignal,
} from '../../../../lambdas/core/rollouts/effect-state.ts';
import type { Activation, Pipeline } from '../../../../lambdas/core/schemas/pipelines.ts';
import type { Execution } from '../../../../lambdas/core/schemas/records.ts';
import type { Rollout } from '../../../../lambdas/core/schemas/rollouts.ts';
import type { SynthesisRun } from '../../../../lambdas/core/schemas/runs.ts';
import {
  EFFECT_CACHE_SECONDS,
  makeGetEffect,
  touchedSlots,
} from '../../../../lambdas/core/use-cases/effect.ts';
import { makeRecentEffectStates } from '../../../../lambdas/wiring/recent-effect-states.ts';
import { makeWorld, pendingRun, principal, rejection, seedPipeline, type World } from './fakes.ts';

const NOW = '2025-06-02T12:00:00.000Z';
const APPROVED = '2025-06-02T11:00:00.000Z';
const at = (minutes: number) => new Date(Date.parse(APPROVED) + minutes * 60_000).toISOString();

/** The recording index as the store reads it: by recording key, newest first, bounded. */
class FakeEffectStore {
  readonly executions: Array<RecordedExecution & { configurationId: string }> = [];
  readonly signals: RecordedSignal[] = [];
  readonly reads: Array<{ configurationId: string; after: string; limit: number }> = [];
  readonly signalReads: Array<{ after: string; limit: number }> = [];
  readonly writes: Array<{
    kept: Omit<KeptEffect, 'version'>;
    readVersion: number | null;
    expiresAtEpoch: number;
  }> = [];
  kept: KeptEffect | null = null;
  rollout: Rollout | null = null;
  rolloutKeys: unknown[] = [];
  counts: ArmCounts = { base: { executions: 0, failed: 0 }, candidate: { executions: 0, failed: 0 } };
  activation: Pick<Activation, 'previousConfigurationId'> | null = null;
  activationReads = 0;

  record(configurationId: string, id: string, fields: Partial<Execution> & { recordedAt?: string } = {}) {
    const { recordedAt, ...execution } = fields;
    const startedAt = execution.startedAt ?? at(10);
    this.executions.push({
      key: `${recordedAt ?? startedAt}#${id}`,
      configurationId,
      execution: { id, status: 'succeeded', durationMs: 100, startedAt, ...execution },
    });
  }
  cite(executionId: string, id: string, severity: 'info' | 'warning' | 'critical', occurredAt = at(30)) {
    this.signals.push({ key: `${occurredAt}#${id}`, signal: { id, severity, occurredAt, executionId } });
  }

  readonly repository = {
    executionsRecorded: async (_pipelineId: string, window: ArmWindow & { after: string }, limit: number) => {
      this.reads.push({ configurationId: window.configurationId, after: window.after, limit });
      return this.executions
        .filter(
          (item) =>
            item.configurationId === window.configurationId &&
            item.key > window.after &&
            (window.recordedFrom === undefined || item.key >= window.recordedFrom) &&
            (window.recordedBefore === undefined || item.key < window.recordedBefore) &&
            inWindow(window, item.execution),
        )
        .sort((a, b) => (a.key < b.key ? 1 : -1))
        .slice(0, limit)
        .map(({ key, execution }) => ({ key, execution }));
    },
    citingSignalsRecorded: async (_pipelineId: string, after: string, limit: number) => {
      this.signalReads.push({ after, limit });
      return this.signals.filter((item) => item.key > after).slice(0, limit);
    },
    rolloutCounts: async () => this.counts,
    keptEffect: async () => structuredClone(this.kept),
    keepEffect: async (
      _pipelineId: string,
      kept: Omit<KeptEffect, 'version'>,
      readVersion: number | null,
      expiresAtEpoch: number,
    ) => {
      this.writes.push({ kept: structuredClone(kept), readVersion, expiresAtEpoch });
      if ((this.kept?.version ?? null) !== readVersion) return false;
      this.kept = { ...structuredClone(kept), version: (readVersion ?? 0) + 1 };
      return true;
    },
    get: async (key: unknown) => {
      this.rolloutKeys.push(key);
      return structuredClone(this.rollout);
    },
    activationOfRun: async () => {
      this.activationReads++;
      return this.activation as Activation | null;
    },
  };
}

let world: World;
let pipeline: Pipeline;
let store: FakeEffectStore;
const ada = principal();

beforeEach(async () => {
  world = makeWorld(NOW);
  ({ pipeline } = await seedPipeline(world));
  store = new FakeEffectStore();
});

/** The use case in this execution environment (its remembered states), or in another one. */
const getEffect = (recentStates = world.recentStates) =>
  makeGetEffect({
    runs: world.runs,
    rollouts: store.repository as unknown as RolloutRepository,
    clock: world.clock,
    settings: world.settings,
    recentStates,
  });

const change = (id: string, slotId: string) => ({
  id,
  slotId,
  description: `change ${id}`,
  rationale: 'why',
  findingIds: [],
  patch: {},
});

function approvedRun(fields: Partial<SynthesisRun> = {}): SynthesisRun {
  const run = pendingRun({
    id: 'runapproved0000000001',
    pipelineId: pipeline.id,
    baseConfigurationId: pipeline.activeConfigurationId,
    createdAt: '2025-06-02T09:00:00.000Z',
    status: 'approved',
    approvedAt: APPROVED,
    proposedConfigurationId: 'cfg-proposed',
    appliedConfigurationId: 'cfg-applied',
    changes: [change('c1', 'model'), change('c2', 'prompt')],
    approvedChangeIds: ['c1'],
    ...fields,
  });
  world.runs.seed(run);
  return run;
}

const arm = (effect: { arms: { base: { executions: number }; applied: { executions: number } } }) => [
  effect.arms.base.executions,
  effect.arms.applied.executions,
];

describe('which runs have an effect', () => {
  it('is a 409 naming the status for a run that is not approved', async () => {
    world.runs.seed(
      pendingRun({
        id: 'runpending00000000001',
        pipelineId: pipeline.id,
        baseConfigurationId: 'b',
        createdAt: NOW,
      }),
    );
    const error = await rejection(getEffect()(ada, 'runpending00000000001'));
    expect(error).toBeInstanceOf(ConflictError);
    expect(error.message).toBe('The run is pending; only an approved run has an effect to measure.');
    approvedRun({ id: 'runnotime000000000001', approvedAt: null });
    expect((await rejection(getEffect()(ada, 'runnotime000000000001'))).message).toBe(
      'The run is approved; only an approved run has an effect to measure.',
    );
  });

  it('is a 409 for an approval that applied no configuration', async () => {
    approvedRun({ appliedConfigurationId: null, proposedConfigurationId: null });
    const error = await rejection(getEffect()(ada, 'runapproved0000000001'));
    expect(error).toBeInstanceOf(ConflictError);
    expect(error.message).toBe('Run runapproved0000000001 applied no configuration.');
  });

  it('is a 404 naming the rollout when the run names one that does not exist', async () => {
    approvedRun({ rolloutId: 'rollout-1' });
    const error = await rejection(getEffect()(ada, 'runapproved0000000001'));
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error.message).toBe('Rollout rollout-1 of run runapproved0000000001 does not exist.');
    expect(store.rolloutKeys).toEqual([{ pipelineId: pipeline.id, startedAt: APPROVED, id: 'rollout-1' }]);
  });
});

describe('before against after', () => {
  beforeEach(() => {
    const base = pipeline.activeConfigurationId;
    store.record(base, 'b1', { startedAt: at(-50) });
    store.record(base, 'b2', { startedAt: at(-40), status: 'failed' });
    store.record(base, 'b3', {
      startedAt: at(-30),
      slotResults: [{ slotId: 'model', status: 'failed', durationMs: 7 }],
    });
    store.record(base, 'b-late', { startedAt: at(5) });
    store.record('cfg-applied', 'a1', { startedAt: at(10) });
    store.record('cfg-applied', 'a2', { startedAt: at(20) });
    store.record('cfg-applied', 'a-early', { startedAt: at(-5) });
    store.cite('b2', 's1', 'warning');
    store.cite('a1', 's2', 'critical');
  });

  it("counts the replaced configuration's executions before the approval against the applied one's after", async () => {
    approvedRun({ appliedConfigurationId: null });
    store.record('cfg-proposed', 'p1', { startedAt: at(10) });
    const effect = await getEffect()(ada, 'runapproved0000000001');
    expect(effect).toMatchObject({
      runId: 'runapproved0000000001',
      mode: 'before_after',
      rolloutId: null,
      baseConfigurationId: pipeline.activeConfigurationId,
      appliedConfigurationId: 'cfg-proposed',
      minExecutions: 30,
      verdict: 'not_enough_data',
      measuredAt: NOW,
    });
    expect(arm(effect)).toEqual([3, 1]);
    expect(effect.arms.base).toMatchObject({ failed: 1, signals: { info: 0, warning: 1, critical: 0 } });
  });

  it('measures the slots the approved changes touched, and the signals citing each arm', async () => {
    approvedRun();
    const effect = await getEffect()(ada, 'runapproved0000000001');
    expect(arm(effect)).toEqual([3, 2]);
    expect(effect.arms.applied.signals).toEqual({ info: 0, warning: 0, critical: 1 });
    expect(effect.slots).toEqual([
      expect.objectContaining({
        slotId: 'model',
        base: expect.objectContaining({ executions: 1, failed: 1 }),
      }),
    ]);
    expect(touchedSlots({ ...approvedRun(), approvedChangeIds: null })).toEqual(['model', 'prompt']);
  });

  it('measures against the configuration a rebased approval replaced, as its activation names it', async () => {
    approvedRun();
    store.activation = { previousConfigurationId: 'cfg-rebased' };
    store.record('cfg-rebased', 'r1', { startedAt: at(-20) });
    const effect = await getEffect()(ada, 'runapproved0000000001');
    expect(effect.baseConfigurationId).toBe('cfg-rebased');
    expect(arm(effect)).toEqual([1, 2]);
    // The kept measurement names it from then on: the activation is not read again.
    await getEffect()(ada, 'runapproved0000000001');
    expect(store.activationReads).toBe(1);
  });

  it('keeps its state for an hour, then reads only what was recorded since', async () => {
    approvedRun();
    const first = await getEffect()(ada, 'runapproved0000000001');
    expect(store.writes).toEqual([
      expect.objectContaining({
        readVersion: null,
        expiresAtEpoch: Date.parse(NOW) / 1000 + EFFECT_CACHE_SECONDS,
      }),
    ]);
    // Kept: the measurement; the judged figures (metrics, notes) are laid over it as it is answered.
    const { metrics: _metrics, notes: _notes, next: _next, progress: _progress, ...measured } = first;
    expect(store.writes[0]?.kept.effect).toEqual(measured);
    const window = new Date(Date.parse(NOW) - 90 * 86_400_000).toISOString();
    expect(store.reads.map((read) => read.after)).toEqual([window, window]);
    expect(store.reads.map((read) => read.limit)).toEqual([1000, 1000]);
    expect(store.signalReads).toEqual([{ after: window, limit: 5000 }]);

    world.clock.advance(10_000);
    const again = await getEffect()(ada, 'runapproved0000000001');
    // Nothing new: the kept measurement, as it was made.
    expect(again).toEqual(first);
    expect(store.writes).toHaveLength(1);
    // Read early from the state this environment remembered (at most 100 an arm): they cover it.
    const mark = new Date(Date.parse(NOW) - 2_000).toISOString();
    expect(store.reads.slice(2)).toEqual([
      { configurationId: pipeline.activeConfigurationId, after: mark, limit: 100 },
      { configurationId: 'cfg-applied', after: mark, limit: 100 },
    ]);
    expect(store.signalReads.slice(1)).toEqual([{ after: mark, limit: 100 }]);
    // Another environment reads from the kept marks.
    await getEffect(makeRecentEffectStates())(ada, 'runapproved0000000001');
    expect(store.reads.slice(4).map((read) => [read.after, read.limit])).toEqual([
      [mark, 1000],
      [mark, 1000],
    ]);

    store.record('cfg-applied', 'a3', { startedAt: at(62), recordedAt: at(62) });
    world.clock.advance(10_000);
    const later = await getEffect()(ada, 'runapproved0000000001');
    expect(arm(later)).toEqual([3, 3]);
    expect(later.measuredAt).toBe(world.clock.now().toISOString());
    // A few items read: the next measurement reads them again rather than this one writing.
    expect(store.writes).toHaveLength(1);
  });

  it('writes the state again once more than 50 items were read after the kept marks', async () => {
    approvedRun();
    await getEffect()(ada, 'runapproved0000000001');
    for (let i = 0; i < 51; i++)
      store.record('cfg-applied', `n${i}`, { startedAt: at(61), recordedAt: at(61) });
    world.clock.advance(10_000);
    const effect = await getEffect()(ada, 'runapproved0000000001');
    expect(arm(effect)).toEqual([3, 53]);
    expect(store.writes.map((write) => write.readVersion)).toEqual([null, 1]);
  });

  it('stops counting an execution once it leaves the retention window, with nothing new recorded', async () => {
    world.settings.byTeam.set('team-a', {
      ...(await world.settings.get('team-a')),
      executionRetentionDays: 1,
    });
    world.clock.set(new Date(Date.parse(at(-50)) + 86_400_000 - 60_000).toISOString());
    approvedRun();
    expect(arm(await getEffect()(ada, 'runapproved0000000001'))).toEqual([3, 2]);
    world.clock.advance(120_000);
    expect(arm(await getEffect()(ada, 'runapproved0000000001'))).toEqual([2, 2]);
  });

  it('stops counting a signal once it leaves the signal window, with nothing new recorded', async () => {
    world.settings.byTeam.set('team-a', { ...(await world.settings.get('team-a')), signalRetentionDays: 1 });
    world.clock.set(new Date(Date.parse(at(30)) + 86_400_000 - 60_000).toISOString());
    approvedRun();
    expect((await getEffect()(ada, 'runapproved0000000001')).arms.base.signals.warning).toBe(1);
    world.clock.advance(120_000);
    expect((await getEffect()(ada, 'runapproved0000000001')).arms.base.signals.warning).toBe(0);
  });

  it('answers the kept measurement when what arrived changes no figure', async () => {
    approvedRun();
    const first = await getEffect()(ada, 'runapproved0000000001');
    // A signal citing an execution no arm holds: kept aside, counted nowhere.
    store.cite('exec-elsewhere', 's9', 'critical', at(61));
    world.clock.advance(10_000);
    expect(await getEffect()(ada, 'runapproved0000000001')).toEqual(first);
  });

  it('is rebuilt from the start of its windows when the kept state no longer fits', async () => {
    approvedRun();
    await getEffect()(ada, 'runapproved0000000001');
    world.clock.advance(3_600_000);
    await getEffect()(ada, 'runapproved0000000001');
    const window = new Date(Date.parse(NOW) + 3_600_000 - 90 * 86_400_000).toISOString();
    expect(store.reads.slice(-2).map((read) => read.after)).toEqual([window, window]);
    expect(store.writes.map((write) => write.readVersion)).toEqual([null, 1]);
  });
});

describe("a rollout's arms", () => {
  const rollout = (fields: Partial<Rollout> = {}): Rollout => ({
    id: 'rollout-1',
    pipelineId: pipeline.id,
    synthesisRunId: 'runapproved0000000001',
    baseConfigurationId: pipeline.activeConfigurationId,
    candidateConfigurationId: 'cfg-applied',
    percent: 50,
    minExecutions: 40,
    autoPromote: false,
    autoRollback: true,
    status: 'active',
    startedAt: APPROVED,
    startedBy: 'user-ada',
    endedAt: null,
    endedBy: null,
    endReason: null,
    ...fields,
  });

  beforeEach(() => {
    approvedRun({ rolloutId: 'rollout-1' });
    const base = pipeline.activeConfigurationId;
    store.record(base, 'before', { startedAt: at(-10) });
    store.record(base, 'b1', { startedAt: at(5) });
    store.record('cfg-applied', 'a1', { startedAt: at(6) });
    store.record('cfg-applied', 'a2', { startedAt: at(40) });
  });

  it('counts what each arm recorded since the rollout started, with its minimum', async () => {
    store.rollout = rollout();
    const effect = await getEffect()(ada, 'runapproved0000000001');
    expect(effect).toMatchObject({
      mode: 'rollout',
      rolloutId: 'rollout-1',
      baseConfigurationId: pipeline.activeConfigurationId,
      appliedConfigurationId: 'cfg-applied',
      minExecutions: 40,
    });
    expect(arm(effect)).toEqual([1, 2]);
  });

  it("says where an active rollout stands: the step of its steps and the candidate's executions at it", async () => {
    store.rollout = rollout({
      percent: 25,
      steps: [5, 25, 50],
      step: 1,
      guardrails: [{ metric: 'failure_rate' }],
    });
    store.counts = {
      base: { executions: 900, failed: 9 },
      candidate: { executions: 150, failed: 1 },
      counters: { '0.b.n': 500, '0.c.n': 40, '1.b.n': 400, '1.c.n': 110 },
    };
    const effect = await getEffect()(ada, 'runapproved0000000001');
    expect(effect.progress).toEqual({
      step: 1,
      steps: 3,
      percent: 25,
      candidateExecutions: 110,
      minExecutions: 40,
    });
    expect(effect.next).toMatch(
      /^moves to step 3 of 3 once the figures show failure rate within 1.00 points/,
    );
    // At the last step with autoPromote off, promoting is a person's move.
    store.rollout = rollout({ guardrails: [{ metric: 'failure_rate' }] });
    expect((await getEffect()(ada, 'runapproved0000000001')).next).toMatch(
      /^can be promoted by hand once .* \(autoPromote is off\)$/,
    );
    // Ended, it has no next step.
    store.rollout = rollout({ status: 'promoted', endedAt: at(30), endedBy: 'user-ada' });
    expect((await getEffect()(ada, 'runapproved0000000001')).progress).toBeNull();
  });

  it('stops at the time an ended rollout ended', async () => {
    store.rollout = rollout({ status: 'promoted', endedAt: at(30), endedBy: 'user-ada' });
    expect(arm(await getEffect()(ada, 'runapproved0000000001'))).toEqual([1, 1]);
  });

  it("answers the rollout's exact counts beside the sample", async () => {
    store.rollout = rollout();
    store.counts = { base: { executions: 500, failed: 50 }, candidate: { executions: 400, failed: 4 } };
    const effect = await getEffect()(ada, 'runapproved0000000001');
    expect(arm(effect)).toEqual([500, 400]);
    expect(effect.arms.base.failed).toBe(50);
    expect(effect.verdict).toBe('improved');
  });

  it('answers a current sample past its size from the counts alone, without reading executions', async () => {
    store.rollout = rollout();
    store.counts = { base: { executions: 1001, failed: 0 }, candidate: { executions: 1001, failed: 0 } };
    const first = await getEffect()(ada, 'runapproved0000000001');
    expect(arm(first)).toEqual([1001, 1001]);
    const reads = store.reads.length;
    store.counts = { base: { executions: 1005, failed: 0 }, candidate: { executions: 1010, failed: 1 } };
    world.clock.advance(1_000);
    const next = await getEffect(makeRecentEffectStates())(ada, 'runapproved0000000001');
    expect(arm(next)).toEqual([1005, 1010]);
    expect(store.reads).toHaveLength(reads);
    // Grown past 1 % or older than 10 s: read again.
    store.counts = { base: { executions: 1020, failed: 0 }, candidate: { executions: 1010, failed: 1 } };
    await getEffect(makeRecentEffectStates())(ada, 'runapproved0000000001');
    expect(store.reads.length).toBeGreaterThan(reads);
  });
});
