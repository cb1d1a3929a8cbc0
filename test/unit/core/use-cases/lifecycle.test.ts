/**
 * The lifecycle use cases against the fakes: synthesis reads only inside the team's windows, a run
 * whose pipeline is deleted while it generates ends failed with nothing written back, and the
 * settings' rules (admins, whole days from 1 to 3650, another team).
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { DomainEvent } from '../../../../lambdas/core/events.ts';
import {
  assertInsideWindow,
  type DeletionReceipt,
  type DeletionStore,
  defaultTeamSettings,
  type ExportStore,
  emptyDeletionCounts,
  expiryEpoch,
  type RetentionStore,
  retentionWindow,
  updateTeamSettingsBodySchema,
} from '../../../../lambdas/core/lifecycle.ts';
import type { Configuration, Pipeline } from '../../../../lambdas/core/schemas/pipelines.ts';
import type { Signal } from '../../../../lambdas/core/schemas/records.ts';
import type { SynthesisRun } from '../../../../lambdas/core/schemas/runs.ts';
import { makeGenerateRun } from '../../../../lambdas/core/use-cases/generation.ts';
import {
  makeApplyRetention,
  makeDeletePipeline,
  makeExportPipeline,
  makeGetDeletion,
  makeRunDeletion,
  makeUpdateTeamSettings,
} from '../../../../lambdas/core/use-cases/lifecycle.ts';
import { makeRecordSignals } from '../../../../lambdas/core/use-cases/pipelines.ts';
import { makeRejectRun } from '../../../../lambdas/core/use-cases/review.ts';
import { makeGetRunEvidence, makeGetSynthesisRun } from '../../../../lambdas/core/use-cases/synthesis.ts';
import { heuristicV1 } from '../../../../lambdas/synthesis/heuristic/engine.ts';
import {
  type FakeTeamSettingsStore,
  makeWorld,
  pendingRun,
  principal,
  rejection,
  seedPipeline,
  type World,
} from './fakes.ts';

const T0 = '2025-06-02T10:00:00.000Z';
const DAY_MS = 86_400_000;

let world: World;
let pipeline: Pipeline;
let base: Configuration;
let settings: FakeTeamSettingsStore;
beforeEach(async () => {
  world = makeWorld(T0);
  ({ pipeline, configuration: base } = await seedPipeline(world));
  settings = world.settings;
});

const daysBefore = (days: number) => new Date(Date.parse(T0) - days * DAY_MS).toISOString();
const signal = (id: string, occurredAt: string): Signal => ({
  id,
  pipelineId: pipeline.id,
  kind: 'timeout',
  severity: 'critical',
  message: `Retrieval timed out ${id}`,
  slotId: 'retrieve',
  occurredAt,
});

const MODEL_USAGE = { model: 'claude-sonnet-4-5', inputTokens: 2000, outputTokens: 10, attempts: 1 };

function seedRun(): SynthesisRun {
  const run = pendingRun({
    id: world.ids.newId(),
    pipelineId: pipeline.id,
    baseConfigurationId: base.id,
    createdAt: world.clock.now().toISOString(),
  });
  world.runs.seed(run);
  return run;
}

const generator = (engine = heuristicV1) =>
  makeGenerateRun({
    runs: world.runs,
    pipelines: world.pipelines,
    evidence: world.evidence,
    evaluations: world.evaluations,
    engines: { 'heuristic-v1': engine },
    clock: world.clock,
    ids: world.ids,
    leaseMs: 60_000,
    isTransient: () => false,
    settings,
    prices: world.prices,
  });

describe('synthesis inside the retention window', () => {
  it('never reads a signal older than the team window', async () => {
    settings.byTeam.set(pipeline.teamId, { ...defaultTeamSettings(pipeline.teamId), signalRetentionDays: 7 });
    await world.pipelines.recordSignals([signal('old', daysBefore(8)), signal('new', daysBefore(1))]);
    const seen: string[][] = [];
    const run = seedRun();
    await generator({
      name: 'heuristic-v1',
      generate: async (context) => {
        seen.push(context.signals.map((s) => s.id));
        return heuristicV1.generate(context);
      },
    })({ runId: run.id, jobId: run.jobId });
    expect(seen).toEqual([['new']]);
  });
});

describe('a deletion while a run is generating', () => {
  it('ends the run failed and writes back nothing of the pipeline', async () => {
    await world.pipelines.recordSignals([signal('s-1', daysBefore(1))]);
    const run = seedRun();
    let saves = 0;
    const save = world.evidence.save.bind(world.evidence);
    world.evidence.save = async (...args) => {
      saves++;
      return save(...args);
    };
    const outcome = await generator({
      name: 'heuristic-v1',
      generate: async (context) => {
        const proposal = await heuristicV1.generate(context);
        world.pipelines.pipelines.delete(pipeline.id); // the DELETE lands while the model works
        return { ...proposal, usage: MODEL_USAGE };
      },
    })({ runId: run.id, jobId: run.jobId });

    expect(outcome.outcome).toBe('failed');
    expect((await world.runs.get(run.id))?.status).toBe('failed');
    expect((await world.runs.get(run.id))?.errorMessage).toMatch(/was deleted while the run was generating/);
    expect(world.evidence.saved.has(run.id)).toBe(false);
    expect(saves).toBe(0);
    expect([...world.pipelines.configurations.values()].map((c) => c.id)).toEqual([base.id]);
    // What the model call cost is kept on the failed run.
    expect((await world.runs.get(run.id))?.usage).toMatchObject(MODEL_USAGE);
  });

  it('takes back the evidence it kept when the DELETE lands between its check and its completion', async () => {
    await world.pipelines.recordSignals([signal('s-1', daysBefore(1))]);
    const run = seedRun();
    const save = world.evidence.save.bind(world.evidence);
    world.evidence.save = async (runId, evidence) => {
      await save(runId, evidence);
      world.pipelines.pipelines.delete(pipeline.id); // after the check, before the proposal is stored
    };

    const outcome = await generator({
      name: 'heuristic-v1',
      generate: async (context) => ({ ...(await heuristicV1.generate(context)), usage: MODEL_USAGE }),
    })({ runId: run.id, jobId: run.jobId });

    expect(outcome.outcome).toBe('failed');
    expect((await world.runs.get(run.id))?.usage).toMatchObject(MODEL_USAGE);
    expect((await world.runs.get(run.id))?.errorMessage).toMatch(/was deleted while the run was generating/);
    expect(world.evidence.saved.has(run.id)).toBe(false);
    expect([...world.pipelines.configurations.values()].map((c) => c.id)).toEqual([base.id]);
  });
});

describe('team settings', () => {
  it('accept whole days from 1 to 3650 only', () => {
    for (const days of [1, 90, 3650]) {
      expect(updateTeamSettingsBodySchema.safeParse({ signalRetentionDays: days }).success).toBe(true);
    }
    for (const days of [0, 3651, 4000, 2.5, -1]) {
      expect(updateTeamSettingsBodySchema.safeParse({ signalRetentionDays: days }).success).toBe(false);
    }
  });

  it('are changed by admins of the team only', async () => {
    const update = makeUpdateTeamSettings({ settings, clock: world.clock, ids: world.ids });
    const teamId = pipeline.teamId;
    expect((await rejection(update(principal({ teamId, role: 'member' }), teamId, {}))).statusCode).toBe(403);
    expect(
      (await rejection(update(principal({ teamId: 'other', role: 'admin' }), teamId, {}))).statusCode,
    ).toBe(403);
    const changed = await update(principal({ teamId, role: 'admin' }), teamId, {
      executionRetentionDays: 30,
    });
    expect(changed).toMatchObject({ signalRetentionDays: 90, executionRetentionDays: 30, updatedAt: T0 });
  });

  it('refuse recording a signal already outside the window, naming it and the window', async () => {
    settings.byTeam.set(pipeline.teamId, {
      ...defaultTeamSettings(pipeline.teamId),
      signalRetentionDays: 30,
    });
    const record = makeRecordSignals({
      pipelines: world.pipelines,
      clock: world.clock,
      ids: world.ids,
      settings,
    });
    const error = await rejection(
      record(principal({ teamId: pipeline.teamId }), pipeline.id, [
        { id: 'late', kind: 'error', severity: 'info', message: 'x', occurredAt: daysBefore(31) },
      ]),
    );
    expect(error.statusCode).toBe(400);
    expect(error.message).toMatch(/signal retention window of 30 days/);
    expect(error.message).toMatch(/late/);
    expect(await world.pipelines.recentSignals(pipeline.id, 10)).toEqual([]);
  });
});

describe('the window arithmetic', () => {
  it('puts the lower bound each window back from now, and the expiry the window after the record', () => {
    const team = { ...defaultTeamSettings('t'), signalRetentionDays: 1, executionRetentionDays: 30 };
    expect(retentionWindow(team, new Date(T0))).toEqual({
      signalsSince: '2025-06-01T10:00:00.000Z',
      executionsSince: '2025-05-03T10:00:00.000Z',
    });
    expect(expiryEpoch('2025-06-01T10:00:00.000Z', 1)).toBe(Date.parse(T0) / 1000);
    expect(expiryEpoch('2025-06-01T10:00:00.500Z', 1)).toBe(Date.parse(T0) / 1000 + 1);
  });

  it('lets a record exactly at the window start in, and names every record before it', () => {
    const since = '2025-06-01T10:00:00.000Z';
    expect(() =>
      assertInsideWindow([{ id: 'edge', at: since }], since, {
        what: 'execution',
        days: 1,
        field: 'startedAt',
      }),
    ).not.toThrow();
    const error = (() => {
      try {
        assertInsideWindow(
          [
            { id: 'a', at: '2025-05-31T00:00:00.000Z' },
            { id: 'b', at: since },
            { id: 'c', at: '2025-06-01T09:59:59.999Z' },
          ],
          since,
          { what: 'execution', days: 1, field: 'startedAt' },
        );
      } catch (caught) {
        return caught as Error & { statusCode: number; details: unknown };
      }
      return undefined;
    })();
    expect(error?.statusCode).toBe(400);
    expect(error?.message).toContain(
      'execution retention window of 1 days (startedAt before 2025-06-01T10:00:00.000Z)',
    );
    expect(error?.message).toContain(': a, c.');
    expect(error?.message).toContain(
      'Send newer records, or ask a team admin to lengthen the window (PATCH /teams/{teamId}/settings).',
    );
    expect(error?.details).toEqual({ retentionDays: 1, oldestAllowed: since });
  });
});

describe('the retention job', () => {
  it('removes older records pipeline by pipeline, checkpoints each, and finishes the team', async () => {
    const calls: string[] = [];
    const retention: RetentionStore = {
      dueTeams: async () => [{ teamId: 't1', requestedAt: T0, pipelineCursor: 'c0' }],
      teamPipelines: async (teamId, cursor) => {
        calls.push(`page ${teamId} after ${cursor}`);
        return cursor === 'c0'
          ? { pipelines: [{ id: 'p1', cursor: 'c1' }], more: true }
          : { pipelines: [{ id: 'p2', cursor: 'c2' }], more: false };
      },
      removeOlder: async (pipelineId, window) => {
        calls.push(`remove ${pipelineId} before ${window.signalsSince}`);
        return { removed: 2, finished: true };
      },
      checkpoint: async (team, cursor) => {
        calls.push(`checkpoint ${team.teamId} ${cursor}`);
      },
      finish: async (team) => {
        calls.push(`finish ${team.teamId}`);
      },
    };
    settings.byTeam.set('t1', { ...defaultTeamSettings('t1'), signalRetentionDays: 1 });
    const result = await makeApplyRetention({ retention, settings, clock: world.clock })();
    expect(result).toEqual({ removed: 4, teamsDone: 1, finished: true });
    expect(calls).toEqual([
      'page t1 after c0',
      'remove p1 before 2025-06-01T10:00:00.000Z',
      'checkpoint t1 c1',
      'page t1 after c1',
      'remove p2 before 2025-06-01T10:00:00.000Z',
      'checkpoint t1 c2',
      'finish t1',
    ]);
  });

  it('stops without a checkpoint when its time runs out in the middle of a pipeline', async () => {
    const calls: string[] = [];
    const retention: RetentionStore = {
      dueTeams: async () => [{ teamId: 't1', requestedAt: T0, pipelineCursor: null }],
      teamPipelines: async () => ({ pipelines: [{ id: 'p1', cursor: 'c1' }], more: false }),
      removeOlder: async () => ({ removed: 1, finished: false }),
      checkpoint: async () => {
        calls.push('checkpoint');
      },
      finish: async () => {
        calls.push('finish');
      },
    };
    const result = await makeApplyRetention({ retention, settings, clock: world.clock })(() => true);
    expect(result).toEqual({ removed: 1, teamsDone: 0, finished: false });
    expect(calls).toEqual([]);
  });
});

describe('deleting a pipeline', () => {
  function fakeDeletions() {
    const receipts = new Map<string, DeletionReceipt>();
    const events: DomainEvent[] = [];
    let steps = 0;
    const store: DeletionStore = {
      start: async (receipt, event) => {
        events.push(event);
        receipts.set(receipt.id, receipt);
        world.pipelines.pipelines.delete(receipt.pipelineId);
      },
      get: async (id) => receipts.get(id) ?? null,
      pendingSince: async () => [],
      step: async (id, at) => {
        steps++;
        const receipt = receipts.get(id) ?? null;
        if (receipt && steps >= 3) {
          const done = { ...receipt, status: 'completed' as const, completedAt: at };
          receipts.set(id, done);
          return { done: true, receipt: done };
        }
        return { done: false, receipt };
      },
    };
    return { store, receipts, events };
  }

  it('answers the pending receipt, queues its job, and is for admins of the team only', async () => {
    const { store, events } = fakeDeletions();
    const sent: unknown[] = [];
    const remove = makeDeletePipeline({
      pipelines: world.pipelines,
      deletions: store,
      queue: { send: async (job) => void sent.push(job) },
      clock: world.clock,
      ids: world.ids,
      runs: world.runs,
    });
    const teamId = pipeline.teamId;
    const member = await rejection(remove(principal({ teamId, role: 'member' }), pipeline.id));
    expect(member.statusCode).toBe(403);
    expect(member.message).toBe('Only a team admin can delete a pipeline; the member role cannot.');
    expect((await rejection(remove(principal({ teamId: 'other' }), pipeline.id))).statusCode).toBe(403);
    expect(sent).toEqual([]);

    const receipt = await remove(principal({ teamId, role: 'admin' }), pipeline.id);
    expect(receipt).toMatchObject({ pipelineId: pipeline.id, teamId, status: 'pending', requestedAt: T0 });
    expect(receipt.counts).toEqual({
      configurations: 0,
      activations: 0,
      rollouts: 0,
      signals: 0,
      executions: 0,
      runs: 0,
    });
    expect(sent).toEqual([{ deletionId: receipt.id }]);
    // The audit log keeps that it happened and by whom: ids only.
    expect(events).toEqual([
      {
        id: `evt_${receipt.id}_pipeline_deleted`,
        type: 'pipeline.deleted',
        timestamp: T0,
        data: {
          teamId,
          pipelineId: pipeline.id,
          status: 'pending',
          actor: { userId: 'user-ada', credential: 'api_token' },
        },
      },
    ]);
    expect((await rejection(remove(principal({ teamId, role: 'admin' }), pipeline.id))).statusCode).toBe(404);

    const get = makeGetDeletion({ deletions: store });
    expect(await get(principal({ teamId, role: 'viewer' }), receipt.id)).toEqual(receipt);
    expect((await rejection(get(principal({ teamId: 'other' }), receipt.id))).statusCode).toBe(403);
    const missing = await rejection(get(principal({ teamId }), 'missing'));
    expect(missing.statusCode).toBe(404);
    expect(missing.message).toBe('Deletion missing does not exist.');
  });

  it("hides the pipeline's runs before it answers: reading, rejecting or showing the evidence of one is a 404", async () => {
    const { store } = fakeDeletions();
    const run = seedRun();
    const other = await seedPipeline(world);
    const kept = pendingRun({
      id: world.ids.newId(),
      pipelineId: other.pipeline.id,
      baseConfigurationId: other.configuration.id,
      createdAt: T0,
    });
    world.runs.seed(kept);
    const admin = principal({ teamId: pipeline.teamId, role: 'admin' });
    const remove = makeDeletePipeline({ ...world, deletions: store, queue: { send: async () => {} } });

    await remove(admin, pipeline.id);

    const reads = [
      makeGetSynthesisRun(world)(admin, run.id),
      makeRejectRun(world)(admin, run.id, undefined),
      makeGetRunEvidence(world)(admin, run.id),
    ];
    for (const read of reads) {
      const error = await rejection(read);
      expect(error.statusCode).toBe(404);
      expect(error.message).toBe(`Synthesis run ${run.id} does not exist.`);
    }
    expect((await makeGetSynthesisRun(world)(admin, kept.id)).id).toBe(kept.id);
  });

  it('runs steps until the receipt completes, or until its time runs short', async () => {
    const { store, receipts } = fakeDeletions();
    receipts.set('d1', {
      id: 'd1',
      pipelineId: pipeline.id,
      teamId: pipeline.teamId,
      status: 'pending',
      requestedAt: T0,
      requestedBy: 'u',
      completedAt: null,
      counts: emptyDeletionCounts(),
    });
    const run = makeRunDeletion({ deletions: store, clock: world.clock });
    expect((await run('d1', () => true)).outcome).toBe('continued');
    const finished = await run('d1', () => false);
    expect(finished.outcome).toBe('completed');
    expect(finished.receipt).toMatchObject({ status: 'completed', completedAt: T0 });
  });
});

describe('exporting a pipeline', () => {
  it("reads a page of its team's pipeline inside the team's windows, under 5 MB unless told", async () => {
    const asked: unknown[] = [];
    const exports = {
      page: async (...args: unknown[]) => {
        asked.push(args);
        return { records: [], nextCursor: null };
      },
    } as unknown as ExportStore;
    settings.byTeam.set(pipeline.teamId, {
      ...defaultTeamSettings(pipeline.teamId),
      signalRetentionDays: 7,
      executionRetentionDays: 30,
    });
    const page = makeExportPipeline({ pipelines: world.pipelines, exports, settings, clock: world.clock });
    expect(await page(principal({ teamId: pipeline.teamId }), pipeline.id, 'c1')).toEqual({
      records: [],
      nextCursor: null,
    });
    expect(asked).toEqual([
      [pipeline.id, 'c1', { signalsSince: daysBefore(7), executionsSince: daysBefore(30) }, 5 * 1024 * 1024],
    ]);
    const small = makeExportPipeline({
      pipelines: world.pipelines,
      exports,
      settings,
      clock: world.clock,
      pageBytes: 10,
    });
    await small(principal({ teamId: pipeline.teamId }), pipeline.id, undefined);
    expect(asked[1]).toEqual([pipeline.id, undefined, expect.any(Object), 10]);
    expect((await rejection(page(principal({ teamId: 'other' }), pipeline.id, undefined))).statusCode).toBe(
      403,
    );
    expect(asked).toHaveLength(2);
  });
});
