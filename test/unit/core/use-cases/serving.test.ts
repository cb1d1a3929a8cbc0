/**
 * Serving against the fakes: the arm a routing key gets, the ETag that lets a caller skip a
 * configuration it holds, the team check, and the reads when a pipeline has no serving item.
 */
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { ForbiddenError, NotFoundError } from '../../../../lambdas/core/errors.ts';
import { routingPoint } from '../../../../lambdas/core/rollouts/routing.ts';
import type { Configuration, Pipeline } from '../../../../lambdas/core/schemas/pipelines.ts';
import type { Rollout } from '../../../../lambdas/core/schemas/rollouts.ts';
import { makeServeConfiguration, servingETag } from '../../../../lambdas/core/use-cases/serving.ts';
import { makeWorld, principal, rejection, SLOTS, seedPipeline, type World } from './fakes.ts';

let world: World;
let pipeline: Pipeline;
let active: Configuration;
const candidate = (pipelineId: string): Configuration => ({
  id: 'cfg-candidate',
  pipelineId,
  version: 2,
  slots: structuredClone(SLOTS),
  source: 'synthesis',
  createdAt: '2025-06-02T09:00:00.000Z',
  createdBy: 'user-ada',
});
const ada = principal();

beforeEach(async () => {
  world = makeWorld();
  ({ pipeline, configuration: active } = await seedPipeline(world));
});

/** Puts a rollout of `percent` on the pipeline, in its item and its serving item. */
function rollOut(percent: number): Rollout {
  const rollout: Rollout = {
    id: 'rollout-1',
    pipelineId: pipeline.id,
    synthesisRunId: 'run-1',
    baseConfigurationId: active.id,
    candidateConfigurationId: 'cfg-candidate',
    percent,
    minExecutions: 30,
    autoPromote: false,
    autoRollback: true,
    status: 'active',
    startedAt: '2025-06-02T09:00:00.000Z',
    startedBy: 'user-ada',
    endedAt: null,
    endedBy: null,
    endReason: null,
  };
  world.pipelines.seedConfiguration(candidate(pipeline.id));
  const entry = world.pipelines.pipelines.get(pipeline.id);
  if (entry) entry.pipeline = { ...entry.pipeline, rollout };
  world.pipelines.serving.set(pipeline.id, {
    pipelineId: pipeline.id,
    teamId: pipeline.teamId,
    active,
    rollout: { id: rollout.id, percent, candidate: candidate(pipeline.id) },
  });
  return rollout;
}

/** A routing key whose point falls below (inside the candidate's percent) or at or above `percent`. */
function keyOf(inside: boolean, percent: number): string {
  for (let i = 0; ; i++) {
    const key = `user-${i}`;
    if (routingPoint('rollout-1', key) < percent === inside) return key;
  }
}

describe('serving a pipeline', () => {
  it('serves the active configuration when no rollout runs, with its ETag', async () => {
    const serve = makeServeConfiguration(world);

    const served = await serve(ada, pipeline.id, 'user-1', undefined);

    expect(served).toEqual({
      etag: `"${active.id}.active.none"`,
      answer: { configuration: active, arm: 'active', rolloutId: null },
    });
  });

  it('answers from the serving item alone: one read, the pipeline and its configurations untouched', async () => {
    rollOut(30);
    const pipelineReads = vi.spyOn(world.pipelines, 'getPipeline');
    const configurationReads = vi.spyOn(world.pipelines, 'getConfiguration');
    const serve = makeServeConfiguration(world);

    await serve(ada, pipeline.id, keyOf(true, 30), undefined);
    await serve(ada, pipeline.id, keyOf(false, 30), undefined);

    expect(pipelineReads).not.toHaveBeenCalled();
    expect(configurationReads).not.toHaveBeenCalled();
  });

  it("serves the candidate to a key inside the rollout's percent and the base to the others", async () => {
    const rollout = rollOut(30);
    const serve = makeServeConfiguration(world);

    const inside = await serve(ada, pipeline.id, keyOf(true, 30), undefined);
    const outside = await serve(ada, pipeline.id, keyOf(false, 30), undefined);

    expect(inside).toEqual({
      etag: `"cfg-candidate.candidate.${rollout.id}"`,
      answer: { configuration: candidate(pipeline.id), arm: 'candidate', rolloutId: rollout.id },
    });
    expect(outside).toEqual({
      etag: `"${active.id}.active.${rollout.id}"`,
      answer: { configuration: active, arm: 'active', rolloutId: rollout.id },
    });
  });

  it('draws an arm for a call without a routing key', async () => {
    rollOut(30);
    const below = await makeServeConfiguration(world, () => 0.299)(ada, pipeline.id, undefined, undefined);
    const above = await makeServeConfiguration(world, () => 0.3)(ada, pipeline.id, undefined, undefined);
    expect([below.answer?.arm, above.answer?.arm]).toEqual(['candidate', 'active']);
  });

  it('answers no body when If-None-Match names the ETag, strongly, weakly or in a list', async () => {
    const serve = makeServeConfiguration(world);
    const etag = servingETag(active.id, 'active', null);

    for (const header of [etag, `W/${etag}`, `"other", ${etag}`, `"other", W/${etag}`, ` ${etag} `]) {
      expect(await serve(ada, pipeline.id, 'user-1', header), header).toEqual({ etag, answer: null });
    }
    expect((await serve(ada, pipeline.id, 'user-1', '"other"')).answer?.arm).toBe('active');
  });

  it("refuses another team's pipeline, and a pipeline that does not exist", async () => {
    const serve = makeServeConfiguration(world);
    expect(
      await rejection(serve(principal({ teamId: 'team-b' }), pipeline.id, 'user-1', undefined)),
    ).toBeInstanceOf(ForbiddenError);
    expect(await rejection(serve(ada, 'missing', 'user-1', undefined))).toBeInstanceOf(NotFoundError);
  });
});

describe('serving a pipeline stored before its serving item was kept', () => {
  beforeEach(() => {
    world.pipelines.serving.clear();
  });

  it('reads the pipeline and the configuration its arm names, and skips the second read on a matching ETag', async () => {
    const rollout = rollOut(30);
    world.pipelines.serving.clear();
    const serve = makeServeConfiguration(world);
    const key = keyOf(true, 30);

    const served = await serve(ada, pipeline.id, key, undefined);
    world.pipelines.configurations.clear();
    const again = await serve(ada, pipeline.id, key, served.etag);

    expect(served).toEqual({
      etag: `"cfg-candidate.candidate.${rollout.id}"`,
      answer: { configuration: candidate(pipeline.id), arm: 'candidate', rolloutId: rollout.id },
    });
    expect(again).toEqual({ etag: served.etag, answer: null });
  });

  it('reads the base configuration for a key outside the percent, and the active one with no rollout', async () => {
    const serve = makeServeConfiguration(world);
    expect(await serve(ada, pipeline.id, 'user-1', undefined)).toEqual({
      etag: `"${active.id}.active.none"`,
      answer: { configuration: active, arm: 'active', rolloutId: null },
    });

    const rollout = rollOut(30);
    world.pipelines.serving.clear();
    expect(await serve(ada, pipeline.id, keyOf(false, 30), undefined)).toEqual({
      etag: `"${active.id}.active.${rollout.id}"`,
      answer: { configuration: active, arm: 'active', rolloutId: rollout.id },
    });
  });

  it("is a 404 naming the configuration when it is gone, and a 403 for another team's pipeline", async () => {
    const serve = makeServeConfiguration(world);
    world.pipelines.configurations.clear();

    const gone = await rejection(serve(ada, pipeline.id, 'user-1', undefined));

    expect(gone).toBeInstanceOf(NotFoundError);
    expect(gone.message).toBe(`Configuration ${active.id} of pipeline ${pipeline.id} does not exist.`);
    expect(
      await rejection(serve(principal({ teamId: 'team-b' }), pipeline.id, 'user-1', undefined)),
    ).toBeInstanceOf(ForbiddenError);
  });
});
