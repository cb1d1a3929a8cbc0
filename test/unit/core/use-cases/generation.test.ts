import { beforeEach, describe, expect, it, vi } from 'vitest';
import {
  PayloadTooLargeError,
  SynthesisFailure,
  TransientSynthesisError,
} from '../../../../lambdas/core/errors.ts';
import { runEvent, SYSTEM_ACTOR } from '../../../../lambdas/core/events.ts';
import type {
  SynthesisContext,
  SynthesisEngine,
  SynthesisProposal,
} from '../../../../lambdas/core/ports/synthesis.ts';
import type { Configuration, Pipeline } from '../../../../lambdas/core/schemas/pipelines.ts';
import type { Execution, Signal } from '../../../../lambdas/core/schemas/records.ts';
import type { SynthesisRun } from '../../../../lambdas/core/schemas/runs.ts';
import {
  type GenerateRunDeps,
  makeFailDeadJob,
  makeGenerateRun,
  makeSweepStuckRuns,
} from '../../../../lambdas/core/use-cases/generation.ts';
import { makeWorld, pendingRun, SLOTS, seedPipeline, type World } from './fakes.ts';

const LEASE_MS = 60_000;
const T0 = '2025-06-02T10:00:00.000Z';

let world: World;
let pipeline: Pipeline;
let base: Configuration;
beforeEach(async () => {
  world = makeWorld(T0);
  ({ pipeline, configuration: base } = await seedPipeline(world));
});

const signal = (id: string, occurredAt: string): Signal => ({
  id,
  pipelineId: pipeline.id,
  kind: 'model',
  severity: 'warning',
  message: `signal ${id}`,
  slotId: 'model',
  occurredAt,
});
const execution = (id: string, startedAt: string): Execution => ({
  id,
  pipelineId: pipeline.id,
  configurationId: base.id,
  status: 'failed',
  durationMs: 30_000,
  startedAt,
  error: 'timeout',
});

const PROPOSED_SLOTS = [SLOTS[0], { ...SLOTS[1], settings: { ...SLOTS[1]?.settings, timeoutMs: 60_000 } }];

function proposal(overrides: Partial<SynthesisProposal> = {}): SynthesisProposal {
  return {
    diagnosis: {
      summary: 'The model slot times out.',
      findings: [{ id: 'F1', description: 'Calls time out', signalIds: ['sig-2'], executionIds: ['exe-1'] }],
    },
    changes: [
      {
        id: 'C1',
        slotId: 'model',
        description: 'Raise the timeout',
        rationale: 'Calls time out at 30 s',
        findingIds: ['F1'],
        patch: { timeoutMs: 60_000 },
      },
    ],
    structuredWarnings: [
      { type: 'thin_evidence', message: 'Only one signal supports C1.', changeIds: ['C1'] },
    ],
    confidence: 'low',
    analyzedSignalIds: ['sig-2', 'sig-1'],
    analyzedExecutionIds: ['exe-2', 'exe-1'],
    proposedSlots: structuredClone(PROPOSED_SLOTS) as SynthesisProposal['proposedSlots'],
    usage: { model: 'claude-sonnet-4-5-20250929', inputTokens: 1000, outputTokens: 500, attempts: 2 },
    ...overrides,
  };
}

/** An engine that answers with `answer` (or throws what it throws) and keeps the contexts it saw. */
function engine(answer: (context: SynthesisContext) => Promise<SynthesisProposal> | SynthesisProposal) {
  const seen: SynthesisContext[] = [];
  const fake: SynthesisEngine & { seen: SynthesisContext[] } = {
    name: 'heuristic-v1',
    seen,
    async generate(context) {
      seen.push(structuredClone(context));
      return answer(context);
    },
  };
  return fake;
}

const throttled = () => Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' });
const isThrottling = (error: unknown) => error instanceof Error && error.name === 'ThrottlingException';

function generator(heuristic: SynthesisEngine, overrides: Partial<GenerateRunDeps> = {}) {
  return makeGenerateRun({
    runs: world.runs,
    pipelines: world.pipelines,
    evidence: world.evidence,
    evaluations: world.evaluations,
    engines: { 'heuristic-v1': heuristic },
    clock: world.clock,
    ids: world.ids,
    leaseMs: LEASE_MS,
    isTransient: isThrottling,
    prices: world.prices,
    settings: world.settings,
    ...overrides,
  });
}

function seedRun(fields: Partial<SynthesisRun> = {}): SynthesisRun {
  const run = pendingRun({
    id: world.ids.newId(),
    pipelineId: pipeline.id,
    baseConfigurationId: base.id,
    createdAt: world.clock.now().toISOString(),
    ...fields,
  });
  world.runs.seed(run);
  return run;
}

const job = (run: SynthesisRun) => ({ runId: run.id, jobId: run.jobId });
const stored = async (run: SynthesisRun) => world.runs.get(run.id);

describe('generating a run', () => {
  it('stores the proposal, the run generated with its priced usage, and the evidence its findings cite', async () => {
    await world.pipelines.recordSignals([
      signal('sig-1', '2025-06-02T09:00:00.000Z'),
      signal('sig-2', '2025-06-02T09:30:00.000Z'),
    ]);
    await world.pipelines.recordExecutions([
      execution('exe-1', '2025-06-02T09:10:00.000Z'),
      execution('exe-2', '2025-06-02T09:20:00.000Z'),
    ]);
    const run = seedRun({ triggeredBy: 'user-bob' });
    world.clock.advance(1000);
    const heuristic = engine(() => {
      world.clock.advance(4000);
      return proposal();
    });
    const outcome = await generator(heuristic)(job(run));

    expect(heuristic.seen).toEqual([
      {
        pipeline,
        baseConfiguration: base,
        signals: [signal('sig-2', '2025-06-02T09:30:00.000Z'), signal('sig-1', '2025-06-02T09:00:00.000Z')],
        executions: [
          execution('exe-2', '2025-06-02T09:20:00.000Z'),
          execution('exe-1', '2025-06-02T09:10:00.000Z'),
        ],
      },
    ]);
    const generated = await stored(run);
    expect(outcome).toEqual({ outcome: 'generated', run: generated });
    const proposedConfigurationId = generated?.proposedConfigurationId as string;
    expect(generated).toEqual({
      ...run,
      status: 'generated',
      proposedConfigurationId,
      diagnosis: proposal().diagnosis,
      changes: proposal().changes,
      structuredWarnings: proposal().structuredWarnings,
      confidence: 'low',
      analyzedSignalIds: ['sig-2', 'sig-1'],
      analyzedExecutionIds: ['exe-2', 'exe-1'],
      explanation: [
        'The model slot times out.',
        '',
        'Findings:',
        'F1. Calls time out (run exe-1)',
        '',
        'Changes:',
        'C1. [model] Raise the timeout — Calls time out at 30 s (fixes finding F1)',
      ].join('\n'),
      warnings: ['Only one signal supports C1.'],
      generationStartedAt: '2025-06-02T10:00:01.000Z',
      generationCompletedAt: '2025-06-02T10:00:05.000Z',
      errorMessage: null,
      retryReason: null,
      usage: {
        model: 'claude-sonnet-4-5-20250929',
        inputTokens: 1000,
        outputTokens: 500,
        attempts: 2,
        costUsd: 0.0105,
      },
      // The run's cost after it ended: the model's reported usage at the price table.
      costUsd: 0.0105,
    });
    expect(await world.pipelines.getConfiguration(pipeline.id, proposedConfigurationId)).toEqual({
      id: proposedConfigurationId,
      pipelineId: pipeline.id,
      version: 2,
      slots: PROPOSED_SLOTS,
      source: 'synthesis',
      synthesisRunId: run.id,
      createdAt: '2025-06-02T10:00:05.000Z',
      createdBy: 'user-bob',
    });
    expect(await world.evidence.load(run.id)).toEqual({
      signals: [signal('sig-2', '2025-06-02T09:30:00.000Z')],
      executions: [execution('exe-1', '2025-06-02T09:10:00.000Z')],
    });
    expect(world.runs.events).toEqual([
      runEvent(run, 'generated', '2025-06-02T10:00:05.000Z', SYSTEM_ACTOR, {
        configurationId: proposedConfigurationId,
      }),
    ]);
  });

  it('shows the engine the newest 200 signals and the newest 200 executions', async () => {
    const at = (minute: number) =>
      new Date(Date.parse('2025-06-01T00:00:00.000Z') + minute * 60_000).toISOString();
    await world.pipelines.recordSignals(Array.from({ length: 205 }, (_, i) => signal(`sig-${i}`, at(i))));
    await world.pipelines.recordExecutions(
      Array.from({ length: 203 }, (_, i) => execution(`exe-${i}`, at(i))),
    );
    const heuristic = engine(() => proposal());
    await generator(heuristic)(job(seedRun()));
    const [context] = heuristic.seen;
    expect(context?.signals).toHaveLength(200);
    expect(context?.signals[0]?.id).toBe('sig-204');
    expect(context?.signals.at(-1)?.id).toBe('sig-5');
    expect(context?.executions).toHaveLength(200);
    expect(context?.executions[0]?.id).toBe('exe-202');
    expect(context?.executions.at(-1)?.id).toBe('exe-3');
  });

  it('proposes no configuration when the proposal changes nothing', async () => {
    const run = seedRun();
    const outcome = await generator(engine(() => proposal({ changes: [], structuredWarnings: [] })))(
      job(run),
    );
    expect(outcome).toMatchObject({
      outcome: 'generated',
      run: { status: 'generated', proposedConfigurationId: null },
    });
    expect(world.pipelines.configurations.size).toBe(1);
    expect(world.runs.events).toEqual([runEvent(run, 'generated', T0, SYSTEM_ACTOR)]);
  });

  it('gives successive proposals of one pipeline increasing versions', async () => {
    const first = seedRun();
    const second = seedRun();
    const heuristic = engine(() => proposal());
    await generator(heuristic)(job(first));
    await generator(heuristic)(job(second));
    const versions = await Promise.all(
      [first, second].map(async (run) => {
        const { proposedConfigurationId } = (await stored(run)) as SynthesisRun;
        return (await world.pipelines.getConfiguration(pipeline.id, proposedConfigurationId as string))
          ?.version;
      }),
    );
    expect(versions).toEqual([2, 3]);
  });

  it('prices the usage with the deployment’s table, leaves it unpriced for an unknown model, and null without one', async () => {
    const priced = seedRun();
    await generator(
      engine(() => proposal()),
      {
        prices: { 'claude-sonnet-4': { inputPerMillionUsd: 10, outputPerMillionUsd: 20 } },
      },
    )(job(priced));
    expect((await stored(priced))?.usage?.costUsd).toBe(0.02);

    const unknown = seedRun();
    const usage = { model: 'mystery-1', inputTokens: 10, outputTokens: 5, attempts: 1 };
    await generator(engine(() => proposal({ usage })))(job(unknown));
    expect((await stored(unknown))?.usage).toEqual(usage);

    const heuristic = seedRun();
    await generator(engine(() => proposal({ usage: undefined })))(job(heuristic));
    expect((await stored(heuristic))?.usage).toBeNull();
  });

  it('clears the retry reason of an earlier attempt when it succeeds', async () => {
    const run = seedRun({ retryReason: 'A dependency failed for a moment (ThrottlingException).' });
    await generator(engine(() => proposal()))(job(run));
    expect(await stored(run)).toMatchObject({ status: 'generated', retryReason: null, errorMessage: null });
  });
});

describe('a job delivered again', () => {
  it('is skipped when its run is gone or already finished', async () => {
    const heuristic = engine(() => proposal());
    expect(await generator(heuristic)({ runId: 'run-gone-000000000000', jobId: 'j' })).toEqual({
      outcome: 'skipped',
      reason: 'missing',
    });
    const done = seedRun({ status: 'generated', generationStartedAt: T0, proposedConfigurationId: base.id });
    expect(await generator(heuristic)(job(done))).toEqual({
      outcome: 'skipped',
      reason: 'finished',
      run: await stored(done),
    });
    expect(heuristic.seen).toEqual([]);
  });

  it('comes back when the lease of the invocation generating the run runs out', async () => {
    const run = seedRun({ status: 'generating', generationStartedAt: '2025-06-02T09:59:49.500Z' });
    const heuristic = engine(() => proposal());
    const outcome = await generator(heuristic)(job(run));
    expect(outcome).toMatchObject({ outcome: 'retry', run, retryAfterSeconds: 51 });
    const error = (outcome as { error: Error }).error;
    expect(error).toBeInstanceOf(TransientSynthesisError);
    expect(error.message).toBe(
      'Another invocation is generating this run; checking again when its lease ends.',
    );
    expect(await stored(run)).toEqual(run);
    expect(heuristic.seen).toEqual([]);
  });

  it('takes over a run whose lease ran out (its worker died), but not one whose lease ends now', async () => {
    const ending = seedRun({ status: 'generating', generationStartedAt: '2025-06-02T09:59:00.000Z' });
    const outcome = await generator(engine(() => proposal()))(job(ending));
    expect(outcome).toMatchObject({ outcome: 'retry', retryAfterSeconds: 1 });

    const dead = seedRun({ status: 'generating', generationStartedAt: '2025-06-02T09:58:59.999Z' });
    expect((await generator(engine(() => proposal()))(job(dead))).outcome).toBe('generated');
    expect(await stored(dead)).toMatchObject({ status: 'generated', generationStartedAt: T0 });
  });

  it('waits a whole lease when the holder’s start is unknown, and a second when its lease is past', async () => {
    const run = seedRun({ status: 'pending' });
    const generate = generator(engine(() => proposal()));
    // The claim lost a race and read the run back between two writes of another invocation.
    vi.spyOn(world.runs, 'claim').mockResolvedValueOnce({ outcome: 'leased', run });
    expect(await generate(job(run))).toMatchObject({ outcome: 'retry', retryAfterSeconds: 61 });
    vi.spyOn(world.runs, 'claim').mockResolvedValueOnce({
      outcome: 'leased',
      run: { ...run, status: 'generating', generationStartedAt: '2025-06-02T08:00:00.000Z' },
    });
    expect(await generate(job(run))).toMatchObject({ outcome: 'retry', retryAfterSeconds: 1 });
  });
});

describe('a permanent fault', () => {
  it('fails the run with the SynthesisFailure’s message and what the model calls cost; no retry', async () => {
    const run = seedRun();
    world.clock.advance(3000);
    const failure = new SynthesisFailure('The model refused to answer.', {
      usage: { model: 'claude-sonnet-4-5', inputTokens: 2000, outputTokens: 0, attempts: 3 },
    });
    const outcome = await generator(
      engine(() => {
        throw failure;
      }),
    )(job(run));
    const failed = await stored(run);
    expect(outcome).toEqual({ outcome: 'failed', run: failed, error: failure });
    expect(failed).toEqual({
      ...run,
      status: 'failed',
      errorMessage: 'The model refused to answer.',
      generationStartedAt: '2025-06-02T10:00:03.000Z',
      generationCompletedAt: '2025-06-02T10:00:03.000Z',
      usage: { model: 'claude-sonnet-4-5', inputTokens: 2000, outputTokens: 0, attempts: 3, costUsd: 0.006 },
    });
    expect(world.pipelines.configurations.size).toBe(1);
    expect(world.evidence.saved.size).toBe(0);
    expect(world.runs.events).toEqual([runEvent(run, 'failed', '2025-06-02T10:00:03.000Z', SYSTEM_ACTOR)]);
  });

  it('is never retried, even when the transient check would match it', async () => {
    const run = seedRun();
    const failure = Object.assign(new SynthesisFailure('No Anthropic API key is configured.'), {
      name: 'ThrottlingException',
    });
    const outcome = await generator(
      engine(() => {
        throw failure;
      }),
    )(job(run));
    expect(outcome.outcome).toBe('failed');
    expect(await stored(run)).toMatchObject({
      status: 'failed',
      errorMessage: 'No Anthropic API key is configured.',
      retryReason: null,
      usage: null,
    });
  });

  it('names the handler a run asks for that this worker does not have', async () => {
    const run = seedRun({ synthesisHandler: 'claude-v1' });
    const outcome = await generator(engine(() => proposal()))(job(run));
    expect(outcome.outcome).toBe('failed');
    expect((await stored(run))?.errorMessage).toBe('Synthesis handler claude-v1 is not available.');
  });

  it('names the pipeline or base configuration that no longer exists', async () => {
    const orphan = seedRun({ pipelineId: 'pipeline-gone' });
    await generator(engine(() => proposal()))(job(orphan));
    expect(await stored(orphan)).toMatchObject({
      status: 'failed',
      errorMessage: 'Pipeline pipeline-gone no longer exists.',
    });
    const baseless = seedRun({ baseConfigurationId: 'cfg-gone' });
    await generator(engine(() => proposal()))(job(baseless));
    expect(await stored(baseless)).toMatchObject({
      status: 'failed',
      errorMessage: 'Base configuration cfg-gone no longer exists.',
    });
  });

  it('fails with the API error’s message and the spent usage when the proposal cannot be stored', async () => {
    const run = seedRun();
    const tooLarge = new PayloadTooLargeError('The proposal is too large to store.');
    vi.spyOn(world.runs, 'completeGenerated').mockRejectedValueOnce(tooLarge);
    // An API error is ours, never an infrastructure fault, whatever the transient check says.
    const outcome = await generator(
      engine(() => proposal()),
      { isTransient: () => true },
    )(job(run));
    expect(outcome).toMatchObject({ outcome: 'failed', error: tooLarge });
    expect(await stored(run)).toMatchObject({
      status: 'failed',
      errorMessage: 'The proposal is too large to store.',
      usage: { model: 'claude-sonnet-4-5-20250929', inputTokens: 1000, outputTokens: 500, costUsd: 0.0105 },
    });
  });

  it('keeps the spent usage when a SynthesisFailure comes after the model answered', async () => {
    const run = seedRun();
    vi.spyOn(world.evidence, 'save').mockRejectedValueOnce(
      new SynthesisFailure('The evidence is too large.'),
    );
    await generator(engine(() => proposal()))(job(run));
    expect(await stored(run)).toMatchObject({
      status: 'failed',
      errorMessage: 'The evidence is too large.',
      usage: { inputTokens: 1000, outputTokens: 500, costUsd: 0.0105 },
    });
  });

  it('fails an internal error with a message in words, never its class or its text', async () => {
    const run = seedRun();
    const bug = new TypeError("Cannot read properties of undefined (reading 'slots')");
    const outcome = await generator(
      engine(() => {
        throw bug;
      }),
    )(job(run));
    expect(outcome).toMatchObject({ outcome: 'failed', error: bug });
    expect((await stored(run))?.errorMessage).toBe(
      'Generation stopped on an internal error that a retry would not fix; start a new run, and report the run id if it happens again.',
    );
  });

  it('turns a thrown non-error into an Error', async () => {
    const run = seedRun();
    const outcome = await generator(
      engine(() => {
        throw 'boom';
      }),
    )(job(run));
    expect(outcome.outcome).toBe('failed');
    const error = (outcome as { error: unknown }).error;
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toBe('boom');
    expect((await stored(run))?.errorMessage).toMatch(
      /^Generation stopped on an internal error that a retry would not fix/,
    );
  });

  it('leaves a run that was failed meanwhile as it is', async () => {
    const run = seedRun();
    const outcome = await generator(
      engine(async () => {
        await world.runs.fail(run.id, 'Stopped by the sweeper.', T0, ['generating'], undefined, {
          ...runEvent(run, 'failed', T0, SYSTEM_ACTOR),
        });
        throw new SynthesisFailure('The model refused to answer.');
      }),
    )(job(run));
    expect(outcome).toMatchObject({ outcome: 'failed', run: { id: run.id, status: 'generating' } });
    expect((await stored(run))?.errorMessage).toBe('Stopped by the sweeper.');
  });
});

describe('a transient fault', () => {
  it('puts the run back to pending with the reason and asks for a retry after the delay it names', async () => {
    const run = seedRun();
    const slow = new TransientSynthesisError('The model is overloaded (529).', { retryAfterSeconds: 30 });
    const outcome = await generator(
      engine(() => {
        throw slow;
      }),
    )(job(run));
    expect(outcome).toEqual({
      outcome: 'retry',
      run: claimedAs(run),
      error: slow,
      retryAfterSeconds: 30,
    });
    expect(await stored(run)).toMatchObject({
      status: 'pending',
      retryReason: 'The model is overloaded (529).',
      errorMessage: null,
    });
    // The retry claims the released run at once and may succeed.
    expect((await generator(engine(() => proposal()))(job(run))).outcome).toBe('generated');
  });

  it('leaves the delay to the queue when the fault names none', async () => {
    const run = seedRun();
    const outcome = await generator(
      engine(() => {
        throw new TransientSynthesisError('The connection was reset.');
      }),
    )(job(run));
    expect(outcome.outcome).toBe('retry');
    expect(outcome).not.toHaveProperty('retryAfterSeconds');
  });

  it('retries an infrastructure fault the transient check recognizes, saying so in words', async () => {
    const run = seedRun();
    vi.spyOn(world.pipelines, 'recentSignals').mockRejectedValueOnce(throttled());
    const outcome = await generator(engine(() => proposal()))(job(run));
    expect(outcome).toMatchObject({ outcome: 'retry', error: { name: 'ThrottlingException' } });
    expect(outcome).not.toHaveProperty('retryAfterSeconds');
    expect(await stored(run)).toMatchObject({
      status: 'pending',
      retryReason:
        'A service the worker depends on (the database or the queue) failed for a moment; the job will be retried.',
    });
  });

  it('skips a run another worker took over after this lease ran out, leaving it to that worker', async () => {
    const run = seedRun();
    const outcome = await generator(
      engine(async () => {
        world.clock.advance(LEASE_MS + 1);
        await world.runs.claim(run.id, world.clock.now().toISOString(), world.clock.now().toISOString());
        return proposal();
      }),
    )(job(run));
    expect(outcome).toEqual({ outcome: 'skipped', reason: 'lease-lost', run: claimedAs(run, T0) });
    expect(await stored(run)).toMatchObject({
      status: 'generating',
      generationStartedAt: '2025-06-02T10:01:00.001Z',
      proposedConfigurationId: null,
    });
    expect(world.pipelines.configurations.size).toBe(1);
  });
});

/** The run as a claim at `at` returns it. */
function claimedAs(run: SynthesisRun, at = T0): SynthesisRun {
  return { ...run, status: 'generating', generationStartedAt: at };
}

describe('a dead job', () => {
  it('fails its pending or generating run, saying how many attempts were made and why the last failed', async () => {
    const pending = seedRun({ retryReason: 'The model is overloaded (529).' });
    const generating = seedRun({ status: 'generating', generationStartedAt: T0 });
    world.clock.advance(90_000);
    const failDead = makeFailDeadJob(world);
    const failed = await failDead(job(pending), 3);
    expect(failed).toEqual(await stored(pending));
    expect(failed).toMatchObject({
      status: 'failed',
      generationCompletedAt: '2025-06-02T10:01:30.000Z',
      errorMessage:
        'Generation did not succeed in 3 attempts and the job was moved to the dead-letter queue. The last attempt failed because: The model is overloaded (529). Start a new run.',
    });
    expect(await failDead(job(generating), 1)).toMatchObject({
      status: 'failed',
      errorMessage:
        'Generation did not succeed in 1 attempt and the job was moved to the dead-letter queue. Start a new run.',
    });
    expect(world.runs.events.map((event) => [event.type, event.data.runId])).toEqual([
      ['synthesis_run.failed', pending.id],
      ['synthesis_run.failed', generating.id],
    ]);
  });

  it("gives the month back the estimate its run reserved, once, and a finished run's stays spent", async () => {
    const month = `team-a#${T0.slice(0, 7)}`;
    world.spend.months.set(month, 0.05 + 0.02);
    const reserved = seedRun({ synthesisHandler: 'claude-v1', estimatedCostUsd: 0.05 });
    const done = seedRun({
      synthesisHandler: 'claude-v1',
      estimatedCostUsd: 0.02,
      status: 'generated',
      proposedConfigurationId: base.id,
    });
    const failDead = makeFailDeadJob(world);
    await failDead(job(reserved), 5);
    await failDead(job(reserved), 5);
    await failDead(job(done), 5);
    expect(world.spend.months.get(month)).toBeCloseTo(0.02);
  });

  it('leaves a finished run alone, and a missing one is nothing to do', async () => {
    const done = seedRun({ status: 'generated', generationStartedAt: T0, proposedConfigurationId: base.id });
    const failDead = makeFailDeadJob(world);
    expect(await failDead(job(done), 5)).toBeNull();
    expect(await stored(done)).toEqual(done);
    expect(await failDead({ runId: 'run-gone-000000000000', jobId: 'j' }, 5)).toBeNull();
  });
});

describe('the sweeper', () => {
  const MINUTES = 60_000;

  it('fails the runs left pending or generating past the bound, pending first, saying for how long', async () => {
    const stuckPending = seedRun({ retryReason: 'The connection was reset.' });
    world.clock.advance(2 * MINUTES);
    const stuckGenerating = seedRun({
      status: 'generating',
      generationStartedAt: world.clock.now().toISOString(),
    });
    world.clock.advance(3 * MINUTES);
    const finished = seedRun({ status: 'generated', createdAt: T0, proposedConfigurationId: base.id });
    const young = seedRun();
    world.clock.advance(20 * MINUTES);
    // `young` was created exactly 20 minutes ago: not yet past the bound.
    const swept = await makeSweepStuckRuns({
      runs: world.runs,
      clock: world.clock,
      stuckAfterMs: 20 * MINUTES,
      spend: world.spend,
    })();
    expect(swept.map((run) => run.id)).toEqual([stuckPending.id, stuckGenerating.id]);
    expect(swept).toEqual([await stored(stuckPending), await stored(stuckGenerating)]);
    expect(swept[0]).toMatchObject({
      status: 'failed',
      generationCompletedAt: '2025-06-02T10:25:00.000Z',
      errorMessage:
        'The run was still pending more than 20 minutes after it started, longer than every retry of its job can take, so it was stopped. The last attempt failed because: The connection was reset. Start a new run.',
    });
    expect(swept[1]?.errorMessage).toBe(
      'The run was still generating more than 20 minutes after it started, longer than every retry of its job can take, so it was stopped. Start a new run.',
    );
    expect(await stored(young)).toEqual(young);
    expect(await stored(finished)).toEqual(finished);
    expect(world.runs.events).toEqual([
      runEvent(stuckPending, 'failed', '2025-06-02T10:25:00.000Z', SYSTEM_ACTOR),
      runEvent(stuckGenerating, 'failed', '2025-06-02T10:25:00.000Z', SYSTEM_ACTOR),
    ]);
  });

  it('gives each swept run’s reserved estimate back to the month it started in', async () => {
    const month = `team-a#${T0.slice(0, 7)}`;
    world.spend.months.set(month, 0.05 + 0.03 + 0.02);
    seedRun({ synthesisHandler: 'claude-v1', estimatedCostUsd: 0.05 });
    seedRun({
      synthesisHandler: 'claude-v1',
      estimatedCostUsd: 0.03,
      status: 'generating',
      generationStartedAt: T0,
    });
    const young = seedRun({ synthesisHandler: 'claude-v1', estimatedCostUsd: 0.02 });
    world.clock.advance(10 * MINUTES);
    world.runs.seed({ ...young, createdAt: world.clock.now().toISOString() });
    const sweep = makeSweepStuckRuns({
      runs: world.runs,
      clock: world.clock,
      stuckAfterMs: 5 * MINUTES,
      spend: world.spend,
    });
    expect(await sweep()).toHaveLength(2);
    expect(await sweep()).toHaveLength(0);
    // The young run is still in flight: its estimate stays reserved.
    expect(world.spend.months.get(month)).toBeCloseTo(0.02);
  });

  it('rounds the bound to whole minutes in the message', async () => {
    seedRun();
    world.clock.advance(5 * MINUTES);
    const [swept] = await makeSweepStuckRuns({
      runs: world.runs,
      clock: world.clock,
      stuckAfterMs: 80_000,
      spend: world.spend,
    })();
    expect(swept?.errorMessage).toMatch(/^The run was still pending more than 1 minutes after it started/);
  });

  it('fails at most a batch per status per sweep, 100 unless told', async () => {
    for (let i = 0; i < 101; i++) seedRun();
    for (let i = 0; i < 3; i++) seedRun({ status: 'generating', generationStartedAt: T0 });
    world.clock.advance(60 * MINUTES);
    const sweep = makeSweepStuckRuns({
      runs: world.runs,
      clock: world.clock,
      stuckAfterMs: 30 * MINUTES,
      spend: world.spend,
    });
    expect(await sweep()).toHaveLength(103);
    expect(await sweep()).toHaveLength(1);
    for (let i = 0; i < 3; i++) seedRun({ createdAt: T0 });
    const small = makeSweepStuckRuns({
      runs: world.runs,
      clock: world.clock,
      stuckAfterMs: 30 * MINUTES,
      spend: world.spend,
      batchSize: 2,
    });
    expect(await small()).toHaveLength(2);
  });

  it('does not count a run that finished between the listing and the write', async () => {
    const run = seedRun();
    world.clock.advance(60 * MINUTES);
    world.runs.seed({ ...run, status: 'generated', proposedConfigurationId: base.id });
    vi.spyOn(world.runs, 'listStale').mockResolvedValueOnce([run]).mockResolvedValueOnce([]);
    expect(
      await makeSweepStuckRuns({
        runs: world.runs,
        clock: world.clock,
        stuckAfterMs: MINUTES,
        spend: world.spend,
      })(),
    ).toEqual([]);
    expect((await stored(run))?.status).toBe('generated');
  });
});
