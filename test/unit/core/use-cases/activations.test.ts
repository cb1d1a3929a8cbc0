import { beforeEach, describe, expect, it } from 'vitest';
import { ConflictError } from '../../../../lambdas/core/errors.ts';
import { actorOf } from '../../../../lambdas/core/events.ts';
import type { Activation, Configuration, Pipeline } from '../../../../lambdas/core/schemas/pipelines.ts';
import { APPROVAL_RULE_DEFAULTS } from '../../../../lambdas/core/schemas/review.ts';
import type { Rollout } from '../../../../lambdas/core/schemas/rollouts.ts';
import { activatedEvent, makeActivateConfiguration } from '../../../../lambdas/core/use-cases/activations.ts';
import { makeWorld, principal, rejection, SLOTS, seedPipeline, type World } from './fakes.ts';

const T0 = '2025-06-02T10:00:00.000Z';
const ada = principal();
const admin = principal({ userId: 'user-root', principalId: 'user-root', role: 'admin', method: 'session' });

let world: World;
let pipeline: Pipeline;
let v1: Configuration;
let v2: Configuration;
beforeEach(async () => {
  world = makeWorld(T0);
  ({ pipeline, configuration: v1 } = await seedPipeline(world));
  v2 = world.pipelines.putConfiguration({
    id: world.ids.newId(),
    pipelineId: pipeline.id,
    slots: SLOTS.map((slot) => ({ ...slot, settings: { ...slot.settings, maxTokens: 64 } })),
    source: 'manual',
    createdAt: T0,
    createdBy: 'user-ada',
  });
});

const activation = (fields: Partial<Activation> = {}): Activation => ({
  id: 'act-1',
  pipelineId: 'pipe-1',
  configurationId: 'cfg-2',
  version: 2,
  previousConfigurationId: 'cfg-1',
  previousVersion: 1,
  source: 'rollback',
  synthesisRunId: null,
  reason: null,
  summary: 's',
  activatedAt: T0,
  activatedBy: 'user-ada',
  overrideReason: null,
  ...fields,
});

/** A rollout of `candidate` on the pipeline, rolled back. */
const rolledBack = (candidate: Configuration): Rollout => ({
  id: 'ro-7',
  pipelineId: pipeline.id,
  synthesisRunId: 'r0',
  baseConfigurationId: v1.id,
  candidateConfigurationId: candidate.id,
  percent: 10,
  minExecutions: 200,
  autoPromote: false,
  autoRollback: true,
  status: 'rolled_back',
  startedAt: T0,
  startedBy: 'user-ada',
  endedAt: T0,
  endedBy: 'system',
  endReason: 'guardrail',
});

describe('configuration.activated', () => {
  it("names the pipeline's team, the configuration, and the run and override only when there are some", () => {
    const actor = actorOf(ada);
    expect(activatedEvent('team-a', activation(), actor)).toEqual({
      id: 'evt_act-1_configuration_activated',
      type: 'configuration.activated',
      timestamp: T0,
      data: { teamId: 'team-a', pipelineId: 'pipe-1', configurationId: 'cfg-2', actor },
    });
    const full = activatedEvent(
      'team-a',
      activation({ synthesisRunId: 'run-1', overrideReason: 'hotfix' }),
      actor,
    );
    expect(full.data).toEqual({
      teamId: 'team-a',
      pipelineId: 'pipe-1',
      configurationId: 'cfg-2',
      runId: 'run-1',
      overrideReason: 'hotfix',
      actor,
    });
  });
});

describe('activating a configuration by hand', () => {
  it('is a 409 naming the rollout while one is active, activating nothing', async () => {
    const entry = world.pipelines.pipelines.get(pipeline.id);
    if (entry)
      entry.pipeline.rollout = {
        ...rolledBack(v2),
        status: 'active',
        endedAt: null,
        endedBy: null,
        endReason: null,
      };
    const error = await rejection(makeActivateConfiguration(world)(ada, pipeline.id, v2.id, {}));
    expect(error).toBeInstanceOf(ConflictError);
    expect(error.message).toBe(
      'Rollout ro-7 is active on this pipeline: promote it or roll it back before activating another configuration.',
    );
    expect(world.pipelines.activations).toEqual([]);
  });

  it('restores an earlier configuration and serves it alone', async () => {
    world.pipelines.commitActivation(
      activation({ pipelineId: pipeline.id, configurationId: v2.id, previousConfigurationId: v1.id }),
    );
    const restored = await makeActivateConfiguration(world)(ada, pipeline.id, v1.id, { reason: 'worse' });
    expect(restored.summary).toBe(`Restored version 1 (replacing version ${v2.version}).`);
    expect(world.pipelines.serving.get(pipeline.id)).toEqual({
      pipelineId: pipeline.id,
      teamId: 'team-a',
      active: v1,
      rollout: null,
    });
  });

  it('brings back a rolled-back candidate only with an override, saying so in its summary', async () => {
    world.pipelines.rolledBackRollouts.push(rolledBack(v2));
    const refused = await rejection(makeActivateConfiguration(world)(admin, pipeline.id, v2.id, {}));
    expect(refused).toBeInstanceOf(ConflictError);
    expect(refused.message).toBe(
      `Configuration ${v2.id} (version ${v2.version}) was the candidate of rollout ro-7, which was rolled back: only a team admin may bring it back, stating why with "override": {"reason": "…"}.`,
    );
    expect(world.pipelines.activations).toEqual([]);
    const back = await makeActivateConfiguration(world)(admin, pipeline.id, v2.id, {
      override: { reason: 'fixed upstream' },
    });
    expect(back.summary).toBe(
      `Activated version ${v2.version} (replacing version 1), the candidate rollout ro-7 rolled back, by an admin's override.`,
    );
    expect(back.overrideReason).toBe('fixed upstream');
  });

  it('refuses an API token where the rules require a person, saying what a person must do', async () => {
    world.pipelines.commitActivation(
      activation({ pipelineId: pipeline.id, configurationId: v2.id, previousConfigurationId: v1.id }),
    );
    world.approvalRules.rules.set(pipeline.id, {
      ...APPROVAL_RULE_DEFAULTS,
      allowApiTokens: false,
      pipelineId: pipeline.id,
      updatedAt: T0,
      updatedBy: 'user-root',
    });
    const error = await rejection(makeActivateConfiguration(world)(ada, pipeline.id, v1.id, {}));
    expect(error.statusCode).toBe(403);
    expect(error.message).toContain('require a person to change its active configuration:');
  });
});
