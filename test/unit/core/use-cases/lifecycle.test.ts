/**
 * The lifecycle use cases against the fakes: synthesis reads only inside the team's windows, a run
 * whose pipeline is deleted while it generates ends failed with nothing written back, and the
 * settings' rules (admins, whole days from 1 to 3650, another team).
 */
import { beforeEach, describe, expect, it } from 'vitest';
import {
  defaultTeamSettings,
  type TeamSettings,
  type TeamSettingsStore,
  updateTeamSettingsBodySchema,
} from '../../../../lambdas/core/lifecycle.ts';
import type { Configuration, Pipeline, Signal, SynthesisRun } from '../../../../lambdas/core/schemas.ts';
import { makeGenerateRun } from '../../../../lambdas/core/use-cases/generation.ts';
import { makeUpdateTeamSettings } from '../../../../lambdas/core/use-cases/lifecycle.ts';
import { makeRecordSignals } from '../../../../lambdas/core/use-cases/pipelines.ts';
import { heuristicV1 } from '../../../../lambdas/synthesis/heuristic/engine.ts';
import { makeWorld, pendingRun, principal, rejection, seedPipeline, type World } from './fakes.ts';

const T0 = '2025-06-02T10:00:00.000Z';
const DAY_MS = 86_400_000;

class FakeSettings implements TeamSettingsStore {
  readonly byTeam = new Map<string, TeamSettings>();
  async get(teamId: string) {
    return this.byTeam.get(teamId) ?? defaultTeamSettings(teamId);
  }
  async put(settings: TeamSettings) {
    this.byTeam.set(settings.teamId, settings);
  }
}

let world: World;
let pipeline: Pipeline;
let base: Configuration;
let settings: FakeSettings;
beforeEach(async () => {
  world = makeWorld(T0);
  ({ pipeline, configuration: base } = await seedPipeline(world));
  settings = new FakeSettings();
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
    engines: { 'heuristic-v1': engine },
    clock: world.clock,
    ids: world.ids,
    leaseMs: 60_000,
    isTransient: () => false,
    settings,
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
    const outcome = await generator({
      name: 'heuristic-v1',
      generate: async (context) => {
        const proposal = await heuristicV1.generate(context);
        world.pipelines.pipelines.delete(pipeline.id); // the DELETE lands while the model works
        return proposal;
      },
    })({ runId: run.id, jobId: run.jobId });

    expect(outcome.outcome).toBe('failed');
    expect((await world.runs.get(run.id))?.status).toBe('failed');
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
    const update = makeUpdateTeamSettings({ settings, clock: world.clock });
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
