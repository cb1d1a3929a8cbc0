import { beforeEach, describe, expect, it } from 'vitest';
import { ForbiddenError, NotFoundError, ValidationError } from '../../../../lambdas/core/errors.ts';
import type { PipelineRepository } from '../../../../lambdas/core/ports/pipelines.ts';
import {
  makeCreatePipeline,
  makeGetConfiguration,
  makeGetPipeline,
  makeListPipelines,
  makeRecordExecutions,
  makeRecordSignals,
} from '../../../../lambdas/core/use-cases/pipelines.ts';
import { makeWorld, principal, SLOTS, seedPipeline, type World } from './fakes.ts';

let world: World;
beforeEach(() => {
  world = makeWorld('2025-06-02T10:00:00.000Z');
});

const ada = principal();
const viewer = principal({ userId: 'user-vic', principalId: 'user-vic', role: 'viewer' });
const otherTeam = principal({ userId: 'user-eve', principalId: 'user-eve', teamId: 'team-b' });

describe('creating a pipeline', () => {
  it('stores the pipeline of the caller’s team with its first configuration, version 1, active', async () => {
    const pipeline = await makeCreatePipeline(world)(ada, { name: 'Summaries', slots: SLOTS });
    expect(pipeline).toEqual({
      id: pipeline.id,
      teamId: 'team-a',
      name: 'Summaries',
      activeConfigurationId: pipeline.activeConfigurationId,
      createdAt: '2025-06-02T10:00:00.000Z',
      rollout: null,
    });
    expect(pipeline.activeConfigurationId).not.toBe(pipeline.id);
    expect(await world.pipelines.getPipeline(pipeline.id)).toEqual(pipeline);
    expect(await world.pipelines.getConfiguration(pipeline.id, pipeline.activeConfigurationId)).toEqual({
      id: pipeline.activeConfigurationId,
      pipelineId: pipeline.id,
      version: 1,
      slots: SLOTS,
      source: 'manual',
      createdAt: '2025-06-02T10:00:00.000Z',
      createdBy: 'user-ada',
    });
  });

  it('is forbidden to a viewer, and nothing is stored', async () => {
    await expect(makeCreatePipeline(world)(viewer, { name: 'Summaries', slots: SLOTS })).rejects.toThrow(
      new ForbiddenError("The viewer role can read but not change this team's resources."),
    );
    expect(world.pipelines.pipelines.size).toBe(0);
  });
});

describe('reading pipelines', () => {
  it('lists only the caller’s team’s pipelines, newest first', async () => {
    const first = await seedPipeline(world, { name: 'First' });
    world.clock.advance(1000);
    const second = await seedPipeline(world, { name: 'Second' });
    await seedPipeline(world, { teamId: 'team-b', name: 'Theirs' });
    const listed = await makeListPipelines(world)(ada, { limit: 10 });
    expect(listed.items.map((pipeline) => pipeline.name)).toEqual(['Second', 'First']);
    expect(listed.items[0]).toEqual(second.pipeline);
    expect(listed.items[1]).toEqual(first.pipeline);
  });

  it('gets one pipeline: 404 naming it when it does not exist, 403 when it is another team’s', async () => {
    const { pipeline } = await seedPipeline(world);
    expect(await makeGetPipeline(world)(ada, pipeline.id)).toEqual(pipeline);
    await expect(makeGetPipeline(world)(ada, 'nope')).rejects.toThrow(
      new NotFoundError('Pipeline nope does not exist.'),
    );
    await expect(makeGetPipeline(world)(otherTeam, pipeline.id)).rejects.toBeInstanceOf(ForbiddenError);
  });

  it('gets one configuration of an owned pipeline, or a 404 naming both ids', async () => {
    const { pipeline, configuration } = await seedPipeline(world);
    const get = makeGetConfiguration(world);
    expect(await get(ada, pipeline.id, configuration.id)).toEqual(configuration);
    await expect(get(ada, pipeline.id, 'cfg-x')).rejects.toThrow(
      new NotFoundError(`Configuration cfg-x of pipeline ${pipeline.id} does not exist.`),
    );
    await expect(get(otherTeam, pipeline.id, configuration.id)).rejects.toBeInstanceOf(ForbiddenError);
    await expect(get(ada, 'nope', configuration.id)).rejects.toThrow('Pipeline nope does not exist.');
  });
});

describe('recording signals', () => {
  it('fills in ids and times not given, keeps those given, and stores them on the pipeline', async () => {
    const { pipeline } = await seedPipeline(world);
    const recorded = await makeRecordSignals(world)(ada, pipeline.id, [
      { kind: 'model', severity: 'warning', message: 'timed out', slotId: 'model' },
      {
        id: 'sig-given',
        kind: 'prompt',
        severity: 'info',
        message: 'long prompt',
        occurredAt: '2025-06-01T09:00:00.000Z',
      },
    ]);
    expect(recorded).toEqual([
      {
        kind: 'model',
        severity: 'warning',
        message: 'timed out',
        slotId: 'model',
        id: recorded[0]?.id,
        occurredAt: '2025-06-02T10:00:00.000Z',
        pipelineId: pipeline.id,
      },
      {
        id: 'sig-given',
        kind: 'prompt',
        severity: 'info',
        message: 'long prompt',
        occurredAt: '2025-06-01T09:00:00.000Z',
        pipelineId: pipeline.id,
      },
    ]);
    expect(recorded[0]?.id).toMatch(/^id\d+$/);
    expect(await world.pipelines.recentSignals(pipeline.id, 10)).toEqual(recorded);
  });

  it('refuses a viewer and another team, storing nothing', async () => {
    const { pipeline } = await seedPipeline(world);
    const input = [{ kind: 'model', severity: 'info' as const, message: 'm' }];
    await expect(makeRecordSignals(world)(viewer, pipeline.id, input)).rejects.toBeInstanceOf(ForbiddenError);
    await expect(makeRecordSignals(world)(otherTeam, pipeline.id, input)).rejects.toBeInstanceOf(
      ForbiddenError,
    );
    await expect(makeRecordSignals(world)(ada, 'nope', input)).rejects.toBeInstanceOf(NotFoundError);
    expect(world.pipelines.signals.size).toBe(0);
  });

  it('refuses with 409 an id the pipeline already holds, even sent without a time, storing none of the batch', async () => {
    const { pipeline } = await seedPipeline(world);
    const record = makeRecordSignals(world);
    await record(ada, pipeline.id, [{ id: 'sig-a', kind: 'model', severity: 'info', message: 'first' }]);
    world.clock.advance(60_000);

    const refused = record(ada, pipeline.id, [
      { id: 'sig-b', kind: 'model', severity: 'info', message: 'new' },
      { id: 'sig-a', kind: 'model', severity: 'info', message: 'again' },
    ]);

    await expect(refused).rejects.toMatchObject({
      statusCode: 409,
      message: expect.stringContaining(': sig-a.'),
    });
    expect((await world.pipelines.recentSignals(pipeline.id, 10)).map((signal) => signal.id)).toEqual([
      'sig-a',
    ]);
  });
});

describe('recording executions', () => {
  it('charges an execution without a configuration to the active one, and fills ids and times', async () => {
    const { pipeline, configuration } = await seedPipeline(world);
    const recorded = await makeRecordExecutions(world)(ada, pipeline.id, [
      { status: 'failed', durationMs: 1200, error: 'timeout' },
      {
        id: 'exe-given',
        status: 'succeeded',
        durationMs: 300,
        configurationId: 'cfg-old',
        startedAt: '2025-06-01T09:00:00.000Z',
      },
    ]);
    expect(recorded).toEqual([
      {
        status: 'failed',
        durationMs: 1200,
        error: 'timeout',
        id: recorded[0]?.id,
        startedAt: '2025-06-02T10:00:00.000Z',
        configurationId: configuration.id,
        pipelineId: pipeline.id,
      },
      {
        id: 'exe-given',
        status: 'succeeded',
        durationMs: 300,
        configurationId: 'cfg-old',
        startedAt: '2025-06-01T09:00:00.000Z',
        pipelineId: pipeline.id,
      },
    ]);
    expect(recorded[0]?.id).toMatch(/^id\d+$/);
    expect(await world.pipelines.recentExecutions(pipeline.id, 10)).toEqual(recorded);
  });

  it('refuses a viewer and another team, storing nothing', async () => {
    const { pipeline } = await seedPipeline(world);
    const input = [{ status: 'succeeded' as const, durationMs: 1 }];
    await expect(makeRecordExecutions(world)(viewer, pipeline.id, input)).rejects.toBeInstanceOf(
      ForbiddenError,
    );
    await expect(makeRecordExecutions(world)(otherTeam, pipeline.id, input)).rejects.toBeInstanceOf(
      ForbiddenError,
    );
    expect(world.pipelines.executions.size).toBe(0);
  });
});

describe("records older than the team's retention window", () => {
  // The clock reads 2025-06-02T10:00Z and the default windows are 90 days: 2025-03-04T10:00Z is the oldest kept.
  const old = '2025-03-01T00:00:00.000Z';

  it("hands the store the pipeline's rollout, so its arms' counts move with the batch", async () => {
    const { pipeline } = await seedPipeline(world);
    const rollout = {
      id: 'rollout-1',
      pipelineId: pipeline.id,
      synthesisRunId: 'run-1',
      baseConfigurationId: pipeline.activeConfigurationId,
      candidateConfigurationId: 'cfg-candidate',
      percent: 50,
      minExecutions: 30,
      autoPromote: false,
      autoRollback: true,
      status: 'active' as const,
      startedAt: '2025-06-02T09:00:00.000Z',
      startedBy: 'user-ada',
      endedAt: null,
      endedBy: null,
      endReason: null,
    };
    const handed: unknown[] = [];
    const store = world.pipelines.recordExecutions.bind(world.pipelines);
    const port: PipelineRepository = world.pipelines;
    port.recordExecutions = async (executions, days, inRollout) => {
      handed.push([days, inRollout]);
      return store(executions);
    };
    await makeRecordExecutions(world)(ada, pipeline.id, [{ status: 'succeeded', durationMs: 5 }]);
    const entry = world.pipelines.pipelines.get(pipeline.id);
    if (entry) entry.pipeline = { ...entry.pipeline, rollout };
    await makeRecordExecutions(world)(ada, pipeline.id, [{ status: 'succeeded', durationMs: 5 }]);
    expect(handed).toEqual([
      [90, null],
      [90, rollout],
    ]);
  });

  it('refuses old executions, naming them, the window and the field, and stores none of the batch', async () => {
    const { pipeline } = await seedPipeline(world);
    const refusal = makeRecordExecutions(world)(ada, pipeline.id, [
      { id: 'exe-new', status: 'succeeded', durationMs: 1 },
      { id: 'exe-old', status: 'succeeded', durationMs: 1, startedAt: old },
    ]);
    await expect(refusal).rejects.toBeInstanceOf(ValidationError);
    await expect(refusal).rejects.toThrow(
      "These executions are older than the team's execution retention window of 90 days " +
        '(startedAt before 2025-03-04T10:00:00.000Z) and would never be read: exe-old.',
    );
    expect(world.pipelines.executions.size).toBe(0);
  });

  it('refuses old signals the same way, by occurredAt', async () => {
    const { pipeline } = await seedPipeline(world);
    const refusal = makeRecordSignals(world)(ada, pipeline.id, [
      { id: 'sig-old', kind: 'user_feedback', severity: 'warning', message: 'm', occurredAt: old },
    ]);
    await expect(refusal).rejects.toThrow(
      "These signals are older than the team's signal retention window of 90 days " +
        '(occurredAt before 2025-03-04T10:00:00.000Z) and would never be read: sig-old.',
    );
    expect(world.pipelines.signals.size).toBe(0);
  });
});
