import { beforeEach, describe, expect, it } from 'vitest';
import type { Configuration, Pipeline } from '../../../../lambdas/core/schemas/pipelines.ts';
import type { Execution, Signal } from '../../../../lambdas/core/schemas/records.ts';
import { readSynthesisContext } from '../../../../lambdas/core/use-cases/synthesis-context.ts';
import { makeWorld, pendingRun, SLOTS, seedPipeline, type World } from './fakes.ts';

const T0 = '2025-06-02T10:00:00.000Z';
const AN_HOUR_AGO = '2025-06-02T09:00:00.000Z';

let world: World;
let pipeline: Pipeline;
let base: Configuration;
beforeEach(async () => {
  world = makeWorld(T0);
  ({ pipeline, configuration: base } = await seedPipeline(world));
});

function execution(id: string): Execution {
  const stored: Execution = {
    id,
    pipelineId: pipeline.id,
    configurationId: base.id,
    status: 'failed',
    durationMs: 5,
    startedAt: AN_HOUR_AGO,
  };
  world.pipelines.executions.set(id, stored);
  return stored;
}

function signal(executionId?: string): Signal {
  const stored: Signal = {
    id: world.ids.newId(),
    pipelineId: pipeline.id,
    kind: 'model',
    severity: 'warning',
    message: `about ${executionId ?? 'the pipeline'}`,
    ...(executionId === undefined ? {} : { executionId }),
    occurredAt: AN_HOUR_AGO,
  };
  world.pipelines.signals.set(stored.id, stored);
  return stored;
}

const context = (run: Parameters<typeof readSynthesisContext>[1]) => readSynthesisContext(world, run);

describe('readSynthesisContext', () => {
  it("hides a refinement's held-out cases and the signals citing them, showing the rest", async () => {
    const held = execution(world.ids.newId());
    const shown = execution(world.ids.newId());
    const general = signal();
    const citingShown = signal(shown.id);
    signal(held.id);
    const parent = pendingRun({
      id: world.ids.newId(),
      pipelineId: pipeline.id,
      baseConfigurationId: base.id,
      createdAt: T0,
    });
    world.runs.seed(parent);
    world.evaluations.sets.set(parent.id, {
      chosenAt: T0,
      cases: [
        { executionId: held.id, reason: 'failed', startedAt: AN_HOUR_AGO, heldOut: true },
        { executionId: shown.id, reason: 'failed', startedAt: AN_HOUR_AGO, heldOut: false },
      ],
    });
    world.evaluations.executions = [held, shown];
    const seen = await context({
      pipelineId: pipeline.id,
      baseConfigurationId: base.id,
      parentRunId: parent.id,
      rootRunId: parent.id,
    });
    expect(seen.executions.map((e) => e.id)).toEqual([shown.id]);
    expect(seen.signals.map((s) => s.id).sort()).toEqual([general.id, citingShown.id].sort());
    expect(seen.refinement?.parentRunId).toBe(parent.id);
    expect(seen.refinement?.heldOutCount).toBe(1);
    expect(seen.refinement?.cases.map((c) => c.executionId)).toEqual([shown.id]);
  });

  it('shows every execution and signal to a first run, with no refinement', async () => {
    const one = execution(world.ids.newId());
    signal(one.id);
    signal();
    const seen = await context({
      pipelineId: pipeline.id,
      baseConfigurationId: base.id,
      parentRunId: null,
      rootRunId: null,
    });
    expect(seen.executions.map((e) => e.id)).toEqual([one.id]);
    expect(seen.signals).toHaveLength(2);
    expect('refinement' in seen).toBe(false);
    expect('activeSince' in seen).toBe(false);
  });

  it('says since when the base is active and what it replaced, when the last activation made it active', async () => {
    const v2 = world.pipelines.putConfiguration({
      id: world.ids.newId(),
      pipelineId: pipeline.id,
      slots: SLOTS,
      source: 'manual',
      createdAt: T0,
      createdBy: 'user-ada',
    });
    world.pipelines.commitActivation({
      id: world.ids.newId(),
      pipelineId: pipeline.id,
      configurationId: v2.id,
      version: v2.version,
      previousConfigurationId: base.id,
      previousVersion: 1,
      source: 'rollback',
      synthesisRunId: null,
      reason: null,
      summary: 's',
      activatedAt: AN_HOUR_AGO,
      activatedBy: 'user-ada',
      overrideReason: null,
    });
    const seen = await context({
      pipelineId: pipeline.id,
      baseConfigurationId: v2.id,
      parentRunId: null,
      rootRunId: null,
    });
    expect(seen.activeSince).toBe(AN_HOUR_AGO);
    expect(seen.previousConfiguration).toEqual(base);
    const older = await context({
      pipelineId: pipeline.id,
      baseConfigurationId: base.id,
      parentRunId: null,
      rootRunId: null,
    });
    expect('activeSince' in older).toBe(false);
  });
});
