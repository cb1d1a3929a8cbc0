import { beforeEach, describe, expect, it, vi } from 'vitest';
import { ConflictError } from '../../../../lambdas/core/errors.ts';
import type {
  GuardrailCheck,
  KeptEffect,
  RolloutRepository,
} from '../../../../lambdas/core/ports/rollouts.ts';
import type { Pipeline } from '../../../../lambdas/core/schemas/pipelines.ts';
import type { Execution } from '../../../../lambdas/core/schemas/records.ts';
import type { Rollout } from '../../../../lambdas/core/schemas/rollouts.ts';
import { makeJudgeNamedRollouts } from '../../../../lambdas/core/use-cases/guardrail-checks.ts';
import { GUARDRAIL_BATCH, makeJudgeRollouts } from '../../../../lambdas/core/use-cases/guardrails.ts';
import { makeRecordExecutions } from '../../../../lambdas/core/use-cases/pipelines.ts';
import { makeWorld, pendingRun, principal, SLOTS, seedPipeline, type World } from './fakes.ts';

let world: World;
beforeEach(() => {
  world = makeWorld('2025-06-02T10:00:00.000Z');
});

const ada = principal();

function rolloutOf(pipeline: Pipeline, overrides: Partial<Rollout> = {}): Rollout {
  return {
    id: 'rollout-1',
    pipelineId: pipeline.id,
    synthesisRunId: 'run-1',
    baseConfigurationId: pipeline.activeConfigurationId,
    candidateConfigurationId: 'cfg-candidate',
    percent: 50,
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

/** The fake pipeline store with an active rollout on the pipeline. */
async function pipelineInRollout(overrides: Partial<Rollout> = {}) {
  const { pipeline } = await seedPipeline(world);
  const rollout = rolloutOf(pipeline, overrides);
  const entry = world.pipelines.pipelines.get(pipeline.id);
  if (!entry) throw new Error('seeded');
  entry.pipeline = { ...entry.pipeline, rollout };
  return { pipeline, rollout };
}

function queue(send: (check: GuardrailCheck, teamId: string) => Promise<void> = async () => {}) {
  const sent: Array<{ check: GuardrailCheck; teamId: string }> = [];
  const unsent: Array<{ check: GuardrailCheck; error: unknown }> = [];
  return {
    sent,
    unsent,
    guardrails: {
      queue: {
        send: async (check: GuardrailCheck, teamId: string) => {
          sent.push({ check, teamId });
          await send(check, teamId);
        },
      },
      unsent: (check: GuardrailCheck, error: unknown) => unsent.push({ check, error }),
    },
  };
}

describe('recording executions during a rollout', () => {
  it('asks once for the rollout to be judged when the batch ran one of its arms', async () => {
    const { pipeline, rollout } = await pipelineInRollout();
    const q = queue();
    const record = makeRecordExecutions({ ...world, guardrails: q.guardrails });

    await record(ada, pipeline.id, [
      { status: 'failed', durationMs: 10, configurationId: 'cfg-candidate' },
      { status: 'succeeded', durationMs: 10 }, // the active configuration: the base arm
    ]);

    expect(q.sent).toEqual([{ check: { pipelineId: pipeline.id, rolloutId: rollout.id }, teamId: 'team-a' }]);
    expect(world.pipelines.executions.size).toBe(2);
  });

  it('sends nothing without an active rollout, for other configurations, or without a guardrail', async () => {
    const { pipeline: plain } = await seedPipeline(world);
    const { pipeline: guarded } = await pipelineInRollout();
    const { pipeline: unguarded } = await pipelineInRollout({ autoRollback: false, autoPromote: false });
    const q = queue();
    const record = makeRecordExecutions({ ...world, guardrails: q.guardrails });

    await record(ada, plain.id, [{ status: 'failed', durationMs: 10 }]);
    await record(ada, guarded.id, [{ status: 'failed', durationMs: 10, configurationId: 'cfg-older' }]);
    await record(ada, unguarded.id, [{ status: 'failed', durationMs: 10 }]);

    expect(q.sent).toEqual([]);
    expect(world.pipelines.executions.size).toBe(3);
  });

  it('sends while the batch is written, not after it', async () => {
    const { pipeline } = await pipelineInRollout();
    const order: string[] = [];
    const write = world.pipelines.recordExecutions.bind(world.pipelines);
    world.pipelines.recordExecutions = async (executions: Execution[]) => {
      order.push('write started');
      await new Promise((resolve) => setTimeout(resolve, 5));
      await write(executions);
      order.push('write done');
    };
    const q = queue(async () => {
      order.push('sent');
    });

    await makeRecordExecutions({ ...world, guardrails: q.guardrails })(ada, pipeline.id, [
      { status: 'failed', durationMs: 10 },
    ]);

    expect(order).toEqual(['write started', 'sent', 'write done']);
  });

  it('records the batch when the queue refuses the check, and reports the refusal once with the ids', async () => {
    const { pipeline, rollout } = await pipelineInRollout();
    const refusal = new Error('queue unavailable');
    const q = queue(async () => {
      throw refusal;
    });

    const recorded = await makeRecordExecutions({ ...world, guardrails: q.guardrails })(ada, pipeline.id, [
      { status: 'failed', durationMs: 10 },
    ]);

    expect(recorded).toHaveLength(1);
    expect(world.pipelines.executions.size).toBe(1);
    expect(q.unsent).toEqual([{ check: { pipelineId: pipeline.id, rolloutId: rollout.id }, error: refusal }]);
  });
});

/** A rollout store whose arms hold `base` and `candidate` executions (n, failed). */
function armsStore(
  arms: { base: [number, number]; candidate: [number, number] },
  end: RolloutRepository['end'] = async (rollout, ending) => ({
    ...rollout,
    status: ending.status,
    endedAt: ending.at,
    endedBy: ending.by,
    endReason: ending.reason,
  }),
) {
  const executions = (configurationId: string, [n, failed]: [number, number]): Execution[] =>
    Array.from({ length: n }, (_, i) => ({
      id: `${configurationId}-${i}`,
      pipelineId: 'p',
      configurationId,
      status: i < failed ? 'failed' : 'succeeded',
      durationMs: 10,
      startedAt: '2025-06-02T09:30:00.000Z',
    }));
  const reads = vi.fn();
  const ends = vi.fn(end);
  const store = {
    // The judge's maintained measure: nothing kept yet, so it reads each arm as recorded.
    executionsRecorded: async (_pipelineId: string, window: { configurationId: string; after: string }) => {
      reads(window.configurationId);
      const arm = window.configurationId === 'cfg-candidate' ? arms.candidate : arms.base;
      return executions(window.configurationId, arm)
        .map((execution) => ({ key: `2025-06-02T09:30:00.000Z#${execution.id}`, execution }))
        .filter((recorded) => recorded.key > window.after);
    },
    citingSignalsRecorded: async () => [],
    // A rollout started before moments were kept: its failure counts are what the judge reads.
    rolloutCounts: async () => {
      reads('counts');
      return {
        base: { executions: arms.base[0], failed: arms.base[1] },
        candidate: { executions: arms.candidate[0], failed: arms.candidate[1] },
      };
    },
    judgementHistory: async () => [],
    keepJudgementHistory: async () => undefined,
    keptEffect: async () => null,
    keepEffect: async () => true,
    end: ends,
  } as unknown as RolloutRepository;
  return { store, reads, ends };
}

function seedCandidate(pipeline: Pipeline) {
  world.pipelines.seedConfiguration({
    id: 'cfg-candidate',
    pipelineId: pipeline.id,
    version: 2,
    slots: structuredClone(SLOTS),
    source: 'synthesis',
    createdAt: '2025-06-02T09:00:00.000Z',
    createdBy: 'user-ada',
  });
}

describe('judging the rollouts a batch of checks names', () => {
  it('rolls a worse candidate back by "system" with the figures, judging each rollout once', async () => {
    const { pipeline, rollout } = await pipelineInRollout();
    seedCandidate(pipeline);
    const { store, ends } = armsStore({ base: [40, 0], candidate: [40, 20] });
    const judge = makeJudgeNamedRollouts({ ...world, rollouts: store });
    const check = { pipelineId: pipeline.id, rolloutId: rollout.id };

    const results = await judge([check, check, { ...check }]);

    expect(results).toHaveLength(1);
    expect(ends).toHaveBeenCalledTimes(1);
    const [, ending] = ends.mock.calls[0] ?? [];
    expect(ending).toMatchObject({ status: 'rolled_back', by: 'system' });
    expect(ending?.reason).toContain(
      'failure rate 50.00 % (20 of 40) on the candidate against 0.00 % (0 of 40)',
    );
    expect(ending?.reason).toMatch(
      /^Guardrail: failure rate is worse on the candidate: .*; rolled back automatically\.$/,
    );
    expect(results[0]).toMatchObject({ outcome: { action: 'rolled_back', rolloutId: rollout.id } });
  });

  it('keeps a rollout below its minimum, and does nothing for one no longer active', async () => {
    const { pipeline, rollout } = await pipelineInRollout();
    const { pipeline: ended } = await seedPipeline(world);
    const { store, reads, ends } = armsStore({ base: [10, 0], candidate: [10, 9] });
    const judge = makeJudgeNamedRollouts({ ...world, rollouts: store });

    const results = await judge([
      { pipelineId: pipeline.id, rolloutId: rollout.id },
      { pipelineId: pipeline.id, rolloutId: 'an-earlier-rollout' },
      { pipelineId: ended.id, rolloutId: 'rollout-gone' },
      { pipelineId: 'deleted-pipeline', rolloutId: 'rollout-gone' },
    ]);

    expect(results.map((result) => ('outcome' in result ? result.outcome.action : 'error'))).toEqual([
      'kept',
      'not_active',
      'not_active',
      'not_active',
    ]);
    expect(reads).toHaveBeenCalledTimes(1); // the one active rollout's counters
    expect(ends).not.toHaveBeenCalled();
    expect(results.slice(1).map((result) => ('outcome' in result ? result.outcome.reason : ''))).toEqual([
      'the rollout is no longer active',
      'the rollout is no longer active',
      'the pipeline no longer exists',
    ]);
  });

  it('does nothing for a rollout the pipeline still names but that has ended', async () => {
    const { pipeline, rollout } = await pipelineInRollout({ status: 'rolled_back' });
    seedCandidate(pipeline);
    const { store, reads, ends } = armsStore({ base: [40, 0], candidate: [40, 20] });
    const results = await makeJudgeNamedRollouts({ ...world, rollouts: store })([
      { pipelineId: pipeline.id, rolloutId: rollout.id },
    ]);
    expect(results).toEqual([
      {
        check: { pipelineId: pipeline.id, rolloutId: rollout.id },
        outcome: expect.objectContaining({ action: 'not_active', reason: 'the rollout is no longer active' }),
      },
    ]);
    expect(reads).not.toHaveBeenCalled();
    expect(ends).not.toHaveBeenCalled();
  });

  it('calls a person ending the rollout first a lost race, and hands other errors back per rollout', async () => {
    const { pipeline, rollout } = await pipelineInRollout();
    seedCandidate(pipeline);
    const raced = armsStore({ base: [40, 0], candidate: [40, 20] }, async () => {
      throw new ConflictError('Rollout rollout-1 already ended.');
    });
    const check = { pipelineId: pipeline.id, rolloutId: rollout.id };
    expect(await makeJudgeNamedRollouts({ ...world, rollouts: raced.store })([check])).toEqual([
      {
        check,
        outcome: expect.objectContaining({ action: 'lost_race', reason: 'Rollout rollout-1 already ended.' }),
      },
    ]);

    const throttled = new Error('Throughput exceeded');
    const failing = armsStore({ base: [40, 0], candidate: [40, 20] }, async () => {
      throw throttled;
    });
    expect(await makeJudgeNamedRollouts({ ...world, rollouts: failing.store })([check])).toEqual([
      { check, error: throttled },
    ]);
  });
});

describe('the per-batch check and the judge', () => {
  /** Arms that make the measured effect come out as each verdict (30 executions an arm at least). */
  const VERDICTS = {
    roll_back: { base: [40, 0], candidate: [40, 20] },
    // Shown within one point: thousands of executions an arm.
    promote: { base: [6000, 60], candidate: [6000, 54] },
    // Not significant is not shown within the threshold: kept collecting, never promoted.
    keep: { base: [40, 2], candidate: [40, 2] },
    not_enough_data: { base: [10, 0], candidate: [10, 9] },
  } satisfies Record<string, { base: [number, number]; candidate: [number, number] }>;
  const FLAGS = [
    { autoRollback: false, autoPromote: false },
    { autoRollback: true, autoPromote: false },
    { autoRollback: false, autoPromote: true },
    { autoRollback: true, autoPromote: true },
  ];

  it('asks for a judgement exactly when some verdict would make the judge end the rollout', async () => {
    for (const flags of FLAGS) {
      // Arrange: the rollout with these guardrails, judged once on arms of every verdict.
      const actions: string[] = [];
      for (const [verdict, arms] of Object.entries(VERDICTS)) {
        world = makeWorld('2025-06-02T10:00:00.000Z');
        const { pipeline, rollout } = await pipelineInRollout(flags);
        seedCandidate(pipeline);
        const { store } = armsStore(arms);

        // Act
        const [result] = await makeJudgeNamedRollouts({ ...world, rollouts: store })([
          { pipelineId: pipeline.id, rolloutId: rollout.id },
        ]);

        const outcome = result && 'outcome' in result ? result.outcome : undefined;
        // A kept rollout says what it would do next, an ended one why, in words.
        if (outcome?.action === 'kept')
          expect(outcome.reason, `${JSON.stringify(flags)} ${verdict}`).toContain(
            verdict === 'roll_back' ? 'rolls back' : verdict === 'promote' ? 'promotes' : 'still collecting',
          );
        else expect(outcome?.reason).toMatch(/^Guardrail: /);
        actions.push(outcome?.action ?? 'error');
      }
      const judgeActs = actions.some((action) => action === 'promoted' || action === 'rolled_back');
      const { pipeline } = await pipelineInRollout(flags);
      const q = queue();
      await makeRecordExecutions({ ...world, guardrails: q.guardrails })(ada, pipeline.id, [
        { status: 'failed', durationMs: 10 },
      ]);

      // Assert: the batch asked exactly when the judge could act, and the judge acted as its flags say.
      expect(q.sent.length === 1, JSON.stringify({ flags, actions })).toBe(judgeActs);
      expect(actions, JSON.stringify(flags)).toEqual([
        flags.autoRollback ? 'rolled_back' : 'kept',
        flags.autoPromote ? 'promoted' : 'kept',
        'kept',
        'kept',
      ]);
    }
  });
});

describe("the sweeper's pass", () => {
  it('judges every active rollout the store lists, on its counters', async () => {
    const runId = 'run1approvedxxxxxxxxx';
    const { pipeline, rollout } = await pipelineInRollout({ synthesisRunId: runId });
    seedCandidate(pipeline);
    const second = await pipelineInRollout({ id: 'rollout-2', autoRollback: false });
    const run = pendingRun({
      id: runId,
      pipelineId: pipeline.id,
      baseConfigurationId: pipeline.activeConfigurationId,
      createdAt: '2025-06-02T08:00:00.000Z',
      status: 'approved',
      changes: [
        {
          id: 'c1',
          slotId: 'model',
          description: 'd',
          rationale: 'r',
          findingIds: [],
          patch: { temperature: 0.2 },
        },
      ],
    });
    world.runs.seed(run);
    const { store, ends } = armsStore({ base: [40, 0], candidate: [40, 20] });
    const kept: unknown[] = [];
    const active = [rollout, second.rollout];
    const judge = makeJudgeRollouts({
      ...world,
      rollouts: Object.assign(store, {
        listActive: async (limit: number) => (limit === GUARDRAIL_BATCH ? active : []),
        keepEffect: async (_pipelineId: string, effect: unknown) => {
          kept.push(effect);
          return true;
        },
      }),
    });

    const outcomes = await judge();

    expect(outcomes.map((outcome) => [outcome.rolloutId, outcome.action])).toEqual([
      ['rollout-1', 'rolled_back'],
      ['rollout-2', 'kept'],
    ]);
    expect(ends).toHaveBeenCalledTimes(1);
    // The judge decides on the counters alone: the sampled effect is the effect endpoint's, not written here.
    expect(kept).toEqual([]);
  });
});
