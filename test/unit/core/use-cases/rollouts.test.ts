/**
 * Showing and ending a rollout against the fakes: which rollout a pipeline shows, who may end it,
 * the 409 when none is active, and what one transaction writes for a promotion and a rollback.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { ConflictError, ForbiddenError, NotFoundError } from '../../../../lambdas/core/errors.ts';
import type { RolloutEnd, RolloutRepository } from '../../../../lambdas/core/ports/rollouts.ts';
import type { Configuration, Pipeline } from '../../../../lambdas/core/schemas/pipelines.ts';
import type { Rollout } from '../../../../lambdas/core/schemas/rollouts.ts';
import { makeEndRollout, makeGetRollout } from '../../../../lambdas/core/use-cases/rollouts.ts';
import { makeWorld, principal, rejection, SLOTS, seedPipeline, type World } from './fakes.ts';

let world: World;
let pipeline: Pipeline;
let base: Configuration;
const ada = principal({ method: 'session' });
const T = '2025-06-02T10:00:00.000Z';

beforeEach(async () => {
  world = makeWorld(T);
  ({ pipeline, configuration: base } = await seedPipeline(world));
  world.pipelines.seedConfiguration({
    id: 'cfg-candidate',
    pipelineId: pipeline.id,
    version: 2,
    slots: structuredClone(SLOTS),
    source: 'synthesis',
    createdAt: '2025-06-02T09:00:00.000Z',
    createdBy: 'user-ada',
  });
});

function rolloutOf(overrides: Partial<Rollout> = {}): Rollout {
  return {
    id: 'rollout-1',
    pipelineId: pipeline.id,
    synthesisRunId: 'run-1',
    baseConfigurationId: base.id,
    candidateConfigurationId: 'cfg-candidate',
    percent: 10,
    minExecutions: 30,
    autoPromote: false,
    autoRollback: true,
    status: 'active',
    startedAt: '2025-06-02T09:00:00.000Z',
    startedBy: 'user-ada',
    endedAt: null,
    endedBy: null,
    endReason: null,
    ...overrides,
  };
}

/** The pipeline with this rollout active on it. */
function activate(rollout: Rollout): void {
  const entry = world.pipelines.pipelines.get(pipeline.id);
  if (entry) entry.pipeline = { ...entry.pipeline, rollout };
}

/** A rollout store whose latest rollout is `latest`, recording every end it is asked for. */
function rolloutStore(latest: Rollout | null) {
  const ends: Array<{ rollout: Rollout; end: RolloutEnd }> = [];
  const store = {
    latest: async () => latest,
    end: async (rollout: Rollout, end: RolloutEnd) => {
      ends.push({ rollout, end });
      return { ...rollout, status: end.status, endedAt: end.at, endedBy: end.by, endReason: end.reason };
    },
  } as unknown as RolloutRepository;
  return { store, ends };
}

describe("a pipeline's rollout", () => {
  it('is the active one when one runs, else the latest, else a 404', async () => {
    const ended = rolloutOf({ id: 'rollout-0', status: 'rolled_back' });
    const { store } = rolloutStore(ended);
    const get = makeGetRollout({ pipelines: world.pipelines, rollouts: store });
    expect(await get(ada, pipeline.id)).toEqual(ended);

    activate(rolloutOf());
    expect((await get(ada, pipeline.id)).id).toBe('rollout-1');

    const never = makeGetRollout({ pipelines: world.pipelines, rollouts: rolloutStore(null).store });
    const { pipeline: fresh } = await seedPipeline(world);
    const missing = await rejection(never(ada, fresh.id));
    expect(missing).toBeInstanceOf(NotFoundError);
    expect(missing.message).toBe(`Pipeline ${fresh.id} has had no rollout yet.`);
    expect(await rejection(get(principal({ teamId: 'team-b' }), pipeline.id))).toBeInstanceOf(ForbiddenError);
  });
});

describe('ending a rollout', () => {
  it('promotes: the candidate becomes active by an activation of source "rollout", with its events', async () => {
    const rollout = rolloutOf();
    activate(rollout);
    const { store, ends } = rolloutStore(rollout);
    const promote = makeEndRollout({ ...world, rollouts: store }, 'promoted');

    const ended = await promote(ada, pipeline.id, 'Looks good');

    expect(ended).toMatchObject({
      status: 'promoted',
      endedBy: 'user-ada',
      endReason: 'Looks good',
      endedAt: T,
    });
    const [{ end } = { end: undefined }] = ends;
    expect(end?.activation).toEqual({
      id: expect.any(String),
      pipelineId: pipeline.id,
      configurationId: 'cfg-candidate',
      version: 2,
      previousConfigurationId: base.id,
      previousVersion: 1,
      source: 'rollout',
      synthesisRunId: 'run-1',
      reason: 'Looks good',
      summary: 'Promoted rollout rollout-1: version 2 replaces version 1 for all traffic.',
      activatedAt: T,
      activatedBy: 'user-ada',
    });
    expect(end?.serving).toMatchObject({ pipelineId: pipeline.id, teamId: 'team-a', rollout: null });
    expect(end?.serving.active.id).toBe('cfg-candidate');
    expect(end?.events.map((event) => [event.type, event.data.configurationId, event.timestamp])).toEqual([
      ['rollout.promoted', 'cfg-candidate', T],
      ['configuration.activated', 'cfg-candidate', T],
    ]);
    // Named by the rollout and by the activation: a retried end writes the same events.
    expect(end?.events.map((event) => event.id)).toEqual([
      'evt_rollout-1_rollout_promoted',
      `evt_${end?.activation?.id}_configuration_activated`,
    ]);
    expect(end?.events[0]?.data).toMatchObject({
      teamId: 'team-a',
      runId: 'run-1',
      rolloutId: 'rollout-1',
      status: 'promoted',
      actor: { userId: 'user-ada', credential: 'session' },
    });
  });

  it('rolls back: the base stays active, no activation, one event; the reason may be left out', async () => {
    const rollout = rolloutOf();
    activate(rollout);
    const { store, ends } = rolloutStore(rollout);

    await makeEndRollout({ ...world, rollouts: store }, 'rolled_back')(ada, pipeline.id, undefined);

    const [{ end } = { end: undefined }] = ends;
    expect(end).toMatchObject({
      status: 'rolled_back',
      by: 'user-ada',
      reason: null,
      activation: null,
      at: T,
    });
    expect(end?.serving.active.id).toBe(base.id);
    expect(end?.events.map((event) => [event.type, event.data.configurationId, event.data.status])).toEqual([
      ['rollout.rolled_back', base.id, 'rolled_back'],
    ]);
  });

  it('is a 409 without an active rollout, saying how the latest ended or that there was none', async () => {
    const promote = makeEndRollout(
      { ...world, rollouts: rolloutStore(rolloutOf({ status: 'rolled_back' })).store },
      'promoted',
    );
    const ended = await rejection(promote(ada, pipeline.id, undefined));
    expect(ended).toBeInstanceOf(ConflictError);
    expect(ended.message).toBe(
      `Pipeline ${pipeline.id} has no active rollout: rollout rollout-1 already ended (rolled back).`,
    );

    const none = { ...world, rollouts: rolloutStore(null).store };
    expect((await rejection(makeEndRollout(none, 'promoted')(ada, pipeline.id, undefined))).message).toBe(
      `Pipeline ${pipeline.id} has no active rollout to promote.`,
    );
    expect((await rejection(makeEndRollout(none, 'rolled_back')(ada, pipeline.id, undefined))).message).toBe(
      `Pipeline ${pipeline.id} has no active rollout to roll back.`,
    );
  });

  it('is for writers of the team only, and a 404 once a configuration of the rollout is gone', async () => {
    activate(rolloutOf());
    const { store, ends } = rolloutStore(null);
    const promote = makeEndRollout({ ...world, rollouts: store }, 'promoted');

    expect(await rejection(promote(principal({ role: 'viewer' }), pipeline.id, undefined))).toBeInstanceOf(
      ForbiddenError,
    );
    expect(await rejection(promote(principal({ teamId: 'team-b' }), pipeline.id, undefined))).toBeInstanceOf(
      ForbiddenError,
    );
    for (const configurationId of ['cfg-candidate', base.id]) {
      const kept = world.pipelines.configurations.get(`${pipeline.id}#${configurationId}`);
      world.pipelines.configurations.delete(`${pipeline.id}#${configurationId}`);
      const gone = await rejection(promote(ada, pipeline.id, undefined));
      expect(gone, configurationId).toBeInstanceOf(NotFoundError);
      expect(gone.message).toBe('The pipeline or a configuration of rollout rollout-1 no longer exists.');
      if (kept) world.pipelines.seedConfiguration(kept);
    }
    expect(ends).toEqual([]);
  });
});
