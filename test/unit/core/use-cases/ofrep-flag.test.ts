/**
 * One OFREP flag against the fakes: the flag key is the pipeline id, the variant the configuration
 * id, the reason STATIC outside a rollout and SPLIT inside it (with the arm serving gives the same
 * targeting key), and one 404 for a key that is unknown or another team's.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { routingPoint } from '../../../../lambdas/core/rollouts/routing.ts';
import type { Configuration, Pipeline } from '../../../../lambdas/core/schemas/pipelines.ts';
import { FlagNotFoundError, makeEvaluateFlag } from '../../../../lambdas/core/use-cases/ofrep.ts';
import { makeWorld, principal, rejection, SLOTS, seedPipeline, type World } from './fakes.ts';

let world: World;
let pipeline: Pipeline;
let active: Configuration;
const ada = principal();
const candidate = (pipelineId: string): Configuration => ({
  id: 'cfg-candidate',
  pipelineId,
  version: 2,
  slots: structuredClone(SLOTS),
  source: 'synthesis',
  createdAt: '2025-06-02T09:00:00.000Z',
  createdBy: 'user-ada',
});

beforeEach(async () => {
  world = makeWorld();
  ({ pipeline, configuration: active } = await seedPipeline(world));
});

/** A rollout of 50 % in the pipeline's serving item. */
function rollOut() {
  world.pipelines.serving.set(pipeline.id, {
    pipelineId: pipeline.id,
    teamId: pipeline.teamId,
    active,
    rollout: { id: 'rollout-1', percent: 50, candidate: candidate(pipeline.id) },
  });
}

const keyOf = (inside: boolean) => {
  for (let i = 0; ; i++) {
    if (routingPoint('rollout-1', `user-${i}`) < 50 === inside) return `user-${i}`;
  }
};

describe('evaluating one flag', () => {
  it('answers the active configuration, STATIC, on the base arm outside a rollout', async () => {
    const evaluate = makeEvaluateFlag(world, () => 0);
    expect(await evaluate(ada, pipeline.id, undefined)).toEqual({
      key: pipeline.id,
      value: { configurationId: active.id, version: 1, slots: SLOTS },
      variant: active.id,
      reason: 'STATIC',
      metadata: { arm: 'base', version: 1 },
    });
  });

  it('answers the arm serving gives the targeting key, SPLIT, naming the rollout', async () => {
    rollOut();
    const evaluate = makeEvaluateFlag(world, () => 0.99);
    expect(await evaluate(ada, pipeline.id, keyOf(true))).toEqual({
      key: pipeline.id,
      value: { configurationId: 'cfg-candidate', version: 2, slots: SLOTS },
      variant: 'cfg-candidate',
      reason: 'SPLIT',
      metadata: { rolloutId: 'rollout-1', arm: 'candidate', version: 2 },
    });
    expect(await evaluate(ada, pipeline.id, keyOf(false))).toMatchObject({
      variant: active.id,
      reason: 'SPLIT',
      metadata: { rolloutId: 'rollout-1', arm: 'base', version: 1 },
    });
  });

  it('answers one 404 naming the key for an unknown pipeline and for another team’s', async () => {
    const evaluate = makeEvaluateFlag(world, () => 0);
    const eve = principal({ userId: 'user-eve', principalId: 'user-eve', teamId: 'team-b' });
    for (const [who, key] of [
      [ada, 'nope'],
      [eve, pipeline.id],
    ] as const) {
      const error = await rejection(evaluate(who, key, undefined));
      expect(error).toBeInstanceOf(FlagNotFoundError);
      expect(error.message).toBe(
        `No pipeline of your team has the id "${key}" (the flag key is the pipeline id).`,
      );
      expect((error as FlagNotFoundError).key).toBe(key);
    }
  });

  it('passes on a failure that is not a missing pipeline', async () => {
    world.pipelines.getServingState = async () => {
      throw new Error('table unavailable');
    };
    const error = await rejection(makeEvaluateFlag(world, () => 0)(ada, pipeline.id, undefined));
    expect(error).not.toBeInstanceOf(FlagNotFoundError);
    expect(error.message).toBe('table unavailable');
  });
});
