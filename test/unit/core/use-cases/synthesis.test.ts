import { beforeEach, describe, expect, it, vi } from 'vitest';
import {
  ConflictError,
  ForbiddenError,
  NotFoundError,
  QuotaExceededError,
  ServiceUnavailableError,
  ValidationError,
} from '../../../../lambdas/core/errors.ts';
import type { SynthesisRun } from '../../../../lambdas/core/schemas/runs.ts';
import {
  makeGetRunEvidence,
  makeGetSynthesisRun,
  makeStartSynthesis,
  type StartSynthesisDeps,
} from '../../../../lambdas/core/use-cases/synthesis.ts';
import { makeWorld, pendingRun, principal, rejection, seedPipeline, type World } from './fakes.ts';

let world: World;
let started: SynthesisRun[];
beforeEach(() => {
  world = makeWorld('2025-06-02T10:00:00.000Z');
  started = [];
});

const ada = principal();
const bob = principal({ userId: 'user-bob', principalId: 'user-bob' });
const viewer = principal({ userId: 'user-vic', principalId: 'user-vic', role: 'viewer' });
const eve = principal({ userId: 'user-eve', principalId: 'user-eve', teamId: 'team-b' });
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

function start(overrides: Partial<StartSynthesisDeps> = {}) {
  return makeStartSynthesis({
    runs: world.runs,
    pipelines: world.pipelines,
    queue: world.queue,
    clock: world.clock,
    ids: world.ids,
    defaultHandler: 'heuristic-v1',
    idempotency: world.idempotency,
    quota: { store: world.quota, runsPerTeamPerHour: 1_000 },
    onStarted: (run) => started.push(run),
    budget: { estimator: world.estimator, spend: world.spend, settings: world.settings, clock: world.clock },
    ...overrides,
  });
}

describe('starting a synthesis run', () => {
  it('stores a pending run on the active configuration and queues its job', async () => {
    const { pipeline, configuration } = await seedPipeline(world);
    world.clock.advance(5000);
    const run = await start()(bob, pipeline.id, {});
    expect(run).toMatchObject({
      pipelineId: pipeline.id,
      teamId: 'team-a',
      status: 'pending',
      synthesisHandler: 'heuristic-v1',
      baseConfigurationId: configuration.id,
      proposedConfigurationId: null,
      createdAt: '2025-06-02T10:00:05.000Z',
      triggeredBy: 'user-bob',
      errorMessage: null,
      generationStartedAt: null,
    });
    expect(run.id).toHaveLength(21);
    expect(run.jobId).not.toBe(run.id);
    expect(await world.runs.get(run.id)).toEqual(run);
    expect(world.queue.sent).toEqual([{ runId: run.id, jobId: run.jobId, teamId: run.teamId }]);
    expect(started).toEqual([run]);
  });

  it('runs the handler the body names, or the deployment’s default', async () => {
    const { pipeline } = await seedPipeline(world);
    const startClaude = start({ defaultHandler: 'claude-v1' });
    expect((await startClaude(ada, pipeline.id, {})).synthesisHandler).toBe('claude-v1');
    expect((await startClaude(ada, pipeline.id, { synthesisHandler: 'heuristic-v1' })).synthesisHandler).toBe(
      'heuristic-v1',
    );
  });

  it('refuses an unknown handler with a 400 listing the available ones, storing and queueing nothing', async () => {
    const { pipeline } = await seedPipeline(world);
    const error = await rejection(start()(ada, pipeline.id, { synthesisHandler: 'gpt-9' }));
    expect(error).toBeInstanceOf(ValidationError);
    expect(error.message).toBe('Unknown synthesisHandler "gpt-9"; available: heuristic-v1, claude-v1.');
    const byDefault = await rejection(start({ defaultHandler: 'claude-v9' })(ada, pipeline.id, {}));
    expect(byDefault.message).toMatch(/^Unknown synthesisHandler "claude-v9"/);
    expect(world.runs.runs.size).toBe(0);
    expect(world.queue.sent).toEqual([]);
  });

  it('is refused to a viewer (403), on a missing pipeline (404) and on another team’s (403)', async () => {
    const { pipeline } = await seedPipeline(world);
    expect(await rejection(start()(viewer, pipeline.id, {}))).toBeInstanceOf(ForbiddenError);
    const missing = await rejection(start()(ada, 'nope', {}));
    expect(missing).toBeInstanceOf(NotFoundError);
    expect(missing.message).toBe('Pipeline nope does not exist.');
    expect(await rejection(start()(eve, pipeline.id, {}))).toBeInstanceOf(ForbiddenError);
    expect(world.runs.runs.size).toBe(0);
    expect(world.queue.sent).toEqual([]);
  });

  it('fails the run and answers 503 when its job cannot be queued: no run is left pending', async () => {
    const { pipeline } = await seedPipeline(world);
    const queueError = Object.assign(new Error('no such queue'), { name: 'QueueDoesNotExist' });
    world.queue.failWith = queueError;
    world.clock.advance(2000);
    const error = await rejection(start()(ada, pipeline.id, {}));
    expect(error).toBeInstanceOf(ServiceUnavailableError);
    expect(error.statusCode).toBe(503);
    // The queue's error is kept for the logs, never shown in the message.
    expect(error.cause).toBe(queueError);
    expect(error.message).toBe(
      'The synthesis job could not be queued: the queue did not accept it. Retry the request after the time Retry-After gives.',
    );
    expect(error.message).not.toContain('QueueDoesNotExist');
    const [stored] = world.runs.runs.values();
    expect(stored).toMatchObject({
      status: 'failed',
      errorMessage: 'The synthesis job could not be queued; start a new run.',
      generationCompletedAt: '2025-06-02T10:00:02.000Z',
    });
    expect(world.runs.events.map((event) => [event.type, event.data.runId])).toEqual([
      ['synthesis_run.failed', stored?.id],
    ]);
    expect(started).toEqual([]);
  });

  it('frees the Idempotency-Key of a run whose job could not be queued, so a retry starts one', async () => {
    const { pipeline } = await seedPipeline(world);
    world.queue.failWith = new Error('down');
    await rejection(start()(ada, pipeline.id, {}, 'key-1'));
    expect(world.idempotency.records.size).toBe(0);
    world.queue.failWith = undefined;
    const retried = await start()(ada, pipeline.id, {}, 'key-1');
    expect(retried.status).toBe('pending');
    expect(world.queue.sent).toEqual([{ runId: retried.id, jobId: retried.jobId, teamId: retried.teamId }]);
  });

  it('leaves another request’s Idempotency-Key alone when a run without a key cannot be queued', async () => {
    const { pipeline } = await seedPipeline(world);
    // A client may well send the literal key "undefined".
    const first = await start()(ada, pipeline.id, {}, 'undefined');
    world.queue.failWith = new Error('down');
    await rejection(start()(ada, pipeline.id, {}));
    world.queue.failWith = undefined;
    expect((await start()(ada, pipeline.id, {}, 'undefined')).id).toBe(first.id);
  });
  it('needs nobody told of started runs', async () => {
    const { pipeline } = await seedPipeline(world);
    const run = await start({ onStarted: undefined })(ada, pipeline.id, {});
    expect(world.queue.sent).toEqual([{ runId: run.id, jobId: run.jobId, teamId: run.teamId }]);
  });
});

describe('Idempotency-Key', () => {
  it('answers a repeat of the request with the run it started, starting and queueing nothing more', async () => {
    const { pipeline } = await seedPipeline(world);
    const first = await start()(ada, pipeline.id, { synthesisHandler: 'claude-v1' }, 'key-1');
    world.clock.advance(HOUR);
    const again = await start()(bob, pipeline.id, { synthesisHandler: 'claude-v1' }, 'key-1');
    expect(again).toEqual(first);
    expect(world.runs.runs.size).toBe(1);
    expect(world.queue.sent).toHaveLength(1);
    expect(started).toEqual([first]);
  });

  it('is a 409 when the key was used for another pipeline or another handler', async () => {
    const { pipeline } = await seedPipeline(world);
    const other = await seedPipeline(world);
    await start()(ada, pipeline.id, { synthesisHandler: 'heuristic-v1' }, 'key-1');
    for (const attempt of [
      start()(ada, other.pipeline.id, { synthesisHandler: 'heuristic-v1' }, 'key-1'),
      start()(ada, pipeline.id, { synthesisHandler: 'claude-v1' }, 'key-1'),
    ]) {
      const error = await rejection(attempt);
      expect(error).toBeInstanceOf(ConflictError);
      expect(error.message).toBe(
        'This Idempotency-Key was already used for a different request (another pipeline or body); use a new key.',
      );
    }
    expect(world.runs.runs.size).toBe(1);
  });

  it('is a 409 when the key was used to refine another parent', async () => {
    const { pipeline, configuration } = await seedPipeline(world);
    for (const id of ['run_parent_one_______', 'run_parent_two_______']) {
      world.runs.seed({
        ...pendingRun({
          id,
          pipelineId: pipeline.id,
          baseConfigurationId: configuration.id,
          createdAt: '2025-06-02T09:00:00.000Z',
        }),
        status: 'generated',
        evaluation: {
          cases: 1,
          evaluated: 1,
          base: { passed: 0, failed: 1 },
          candidate: { passed: 1, failed: 0 },
          fixed: ['e1'],
          regressed: [],
          durationMsDelta: null,
          costUsdDelta: null,
          updatedAt: '2025-06-02T09:30:00.000Z',
        },
      });
    }
    await start()(ada, pipeline.id, { parentRunId: 'run_parent_one_______' }, 'key-1');
    for (const body of [{ parentRunId: 'run_parent_two_______' }, {}]) {
      const error = await rejection(start()(ada, pipeline.id, body, 'key-1'));
      expect(error).toBeInstanceOf(ConflictError);
    }
    expect(world.runs.runs.size).toBe(3);
  });

  it('answers 404 to a repeat once the pipeline was deleted', async () => {
    const { pipeline } = await seedPipeline(world);
    await start()(ada, pipeline.id, {}, 'key-1');
    world.pipelines.pipelines.delete(pipeline.id);
    const error = await rejection(start()(ada, pipeline.id, {}, 'key-1'));
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error.message).toBe(`Pipeline ${pipeline.id} does not exist.`);
  });

  it('is scoped to the team: another team’s same key starts its own run', async () => {
    const ours = await seedPipeline(world);
    const theirs = await seedPipeline(world, { teamId: 'team-b' });
    const first = await start()(ada, ours.pipeline.id, {}, 'key-1');
    const second = await start()(eve, theirs.pipeline.id, {}, 'key-1');
    expect(second.id).not.toBe(first.id);
    expect(second.teamId).toBe('team-b');
  });

  it('is remembered 24 hours after the run was created, and then starts a new run', async () => {
    const { pipeline } = await seedPipeline(world);
    const first = await start()(ada, pipeline.id, {}, 'key-1');
    world.clock.advance(DAY - 1);
    expect((await start()(ada, pipeline.id, {}, 'key-1')).id).toBe(first.id);
    world.clock.advance(1);
    const later = await start()(ada, pipeline.id, {}, 'key-1');
    expect(later.id).not.toBe(first.id);
    expect(world.queue.sent).toHaveLength(2);
    world.clock.advance(DAY - 1);
    expect((await start()(ada, pipeline.id, {}, 'key-1')).id).toBe(later.id);
  });

  it('is held 15 seconds for a request that died before its run existed: 409 meanwhile, free after', async () => {
    const { pipeline } = await seedPipeline(world);
    vi.spyOn(world.runs, 'create').mockRejectedValueOnce(new Error('the function timed out'));
    await expect(start()(ada, pipeline.id, {}, 'key-1')).rejects.toThrow('the function timed out');
    world.clock.advance(14_999);
    const meanwhile = await rejection(start()(ada, pipeline.id, {}, 'key-1'));
    expect(meanwhile).toBeInstanceOf(ConflictError);
    expect(meanwhile.message).toBe(
      'A request with this Idempotency-Key is still in progress; retry shortly.',
    );
    world.clock.advance(1);
    const run = await start()(ada, pipeline.id, {}, 'key-1');
    expect(run.status).toBe('pending');
    expect(world.queue.sent).toEqual([{ runId: run.id, jobId: run.jobId, teamId: run.teamId }]);
  });

  it('answers the loser of a race on the key with the winner’s run', async () => {
    const { pipeline } = await seedPipeline(world);
    const winner = await start()(ada, pipeline.id, {}, 'key-1');
    // The loser looked before the winner reserved the key.
    vi.spyOn(world.idempotency, 'find').mockResolvedValueOnce(null);
    const loser = await start()(ada, pipeline.id, {}, 'key-1');
    expect(loser).toEqual(winner);
    expect(world.runs.runs.size).toBe(1);
    expect(world.queue.sent).toHaveLength(1);
    expect(started).toEqual([winner]);
  });

  it('answers the loser of a race with a 409 while the winner has not stored its run yet', async () => {
    const { pipeline } = await seedPipeline(world);
    await world.idempotency.reserve(
      'team-a',
      'key-1',
      { requestHash: 'another request', runId: 'run-not-yet-stored', expiresAt: '2025-06-02T10:00:15.000Z' },
      '2025-06-02T10:00:00.000Z',
    );
    vi.spyOn(world.idempotency, 'find').mockResolvedValueOnce(null).mockResolvedValueOnce(null);
    const error = await rejection(start()(ada, pipeline.id, {}, 'key-1'));
    expect(error).toBeInstanceOf(ConflictError);
    expect(error.message).toBe('A request with this Idempotency-Key is still in progress; retry shortly.');
    expect(world.runs.runs.size).toBe(0);
    expect(world.queue.sent).toEqual([]);
  });

  it('keeps the key for its run, 24 hours from the run’s creation', async () => {
    const { pipeline } = await seedPipeline(world);
    const run = await start()(ada, pipeline.id, {}, 'key-1');
    expect(await world.idempotency.find('team-a', 'key-1')).toEqual({
      requestHash: expect.stringMatching(/^[0-9a-f]{64}$/),
      runId: run.id,
      expiresAt: '2025-06-03T10:00:00.000Z',
      pipelineId: pipeline.id,
    });
  });
});

describe('the per-team quota', () => {
  const quota = () => ({ store: world.quota, runsPerTeamPerHour: 2 });

  it('refuses the run over the hour’s quota with a 429 naming it and the seconds to the next hour', async () => {
    const { pipeline } = await seedPipeline(world);
    world.clock.set('2025-06-02T10:15:00.000Z');
    const limited = start({ quota: quota() });
    await limited(ada, pipeline.id, {});
    await limited(bob, pipeline.id, {});
    world.clock.set('2025-06-02T10:59:58.400Z');
    const error = await rejection(limited(ada, pipeline.id, {}));
    expect(error).toBeInstanceOf(QuotaExceededError);
    expect(error.statusCode).toBe(429);
    expect(error.message).toBe(
      'Your team has started 2 synthesis runs this hour, its quota; retry after the hour ends.',
    );
    expect((error as QuotaExceededError).retryAfterSeconds).toBe(2);
    expect(world.runs.runs.size).toBe(2);
    expect(world.queue.sent).toHaveLength(2);
    expect(Object.fromEntries(world.quota.counters)).toEqual({
      'SYNTHESIS#team-a#2025-06-02T10:00:00.000Z': { count: 2, expiresAt: '2025-06-02T12:00:00.000Z' },
    });
    world.clock.set('2025-06-02T11:00:00.000Z');
    expect((await limited(ada, pipeline.id, {})).status).toBe('pending');
  });

  it('does not count a request answered 409 because its Idempotency-Key is still in progress', async () => {
    const { pipeline } = await seedPipeline(world);
    const limited = start({ quota: quota() });
    vi.spyOn(world.runs, 'create').mockRejectedValueOnce(new Error('the function timed out'));
    await expect(limited(ada, pipeline.id, {}, 'key-1')).rejects.toThrow('the function timed out');
    world.clock.advance(1000);
    expect(await rejection(limited(ada, pipeline.id, {}, 'key-1'))).toBeInstanceOf(ConflictError);
    expect((await limited(ada, pipeline.id, {}, 'key-2')).status).toBe('pending');
  });

  it('says to wait the whole hour when the quota is spent at its first millisecond', async () => {
    const { pipeline } = await seedPipeline(world);
    world.clock.set('2025-06-02T11:00:00.000Z');
    const limited = start({ quota: { store: world.quota, runsPerTeamPerHour: 0 } });
    const error = await rejection(limited(ada, pipeline.id, {}));
    expect((error as QuotaExceededError).retryAfterSeconds).toBe(3600);
    expect(error.message).toMatch(/started 0 synthesis runs/);
  });

  it('counts each team on its own', async () => {
    const ours = await seedPipeline(world);
    const theirs = await seedPipeline(world, { teamId: 'team-b' });
    const limited = start({ quota: { store: world.quota, runsPerTeamPerHour: 1 } });
    await limited(ada, ours.pipeline.id, {});
    expect((await limited(eve, theirs.pipeline.id, {})).teamId).toBe('team-b');
    expect(await rejection(limited(ada, ours.pipeline.id, {}))).toBeInstanceOf(QuotaExceededError);
  });

  it('does not count a replay of an Idempotency-Key', async () => {
    const { pipeline } = await seedPipeline(world);
    const limited = start({ quota: { store: world.quota, runsPerTeamPerHour: 1 } });
    const first = await limited(ada, pipeline.id, {}, 'key-1');
    expect((await limited(ada, pipeline.id, {}, 'key-1')).id).toBe(first.id);
  });
});

describe('reading a run and its evidence', () => {
  it('gets a run of the caller’s team; 404 naming a missing run, 403 for another team’s', async () => {
    const { pipeline } = await seedPipeline(world);
    const run = await start()(ada, pipeline.id, {});
    const get = makeGetSynthesisRun(world);
    expect(await get(viewer, run.id)).toEqual(run);
    const missing = await rejection(get(ada, 'run-missing'));
    expect(missing).toBeInstanceOf(NotFoundError);
    expect(missing.message).toBe('Synthesis run run-missing does not exist.');
    expect(await rejection(get(eve, run.id))).toBeInstanceOf(ForbiddenError);
  });

  it('reads the evidence the run kept, guarded like the run', async () => {
    const { pipeline } = await seedPipeline(world);
    const run = await start()(ada, pipeline.id, {});
    const signal = {
      id: 'sig-1',
      pipelineId: pipeline.id,
      kind: 'model',
      severity: 'warning' as const,
      message: 'timed out',
      occurredAt: '2025-06-02T09:00:00.000Z',
    };
    await world.evidence.save(run.id, { signals: [signal], executions: [] });
    await world.evidence.save('run-missing', { signals: [signal], executions: [] });
    const read = makeGetRunEvidence(world);
    expect(await read(viewer, run.id)).toEqual({ signals: [signal], executions: [] });
    // Cited records the team's windows no longer hold are left out; one at a window's start stays.
    world.settings.byTeam.set('team-a', {
      ...(await world.settings.get('team-a')),
      signalRetentionDays: 1,
      executionRetentionDays: 2,
    });
    const at = (days: number) => new Date(Date.parse('2025-06-02T10:00:00.000Z') - days * DAY).toISOString();
    const execution = (id: string, startedAt: string) => ({
      id,
      pipelineId: pipeline.id,
      configurationId: 'c',
      status: 'failed' as const,
      durationMs: 5,
      startedAt,
    });
    await world.evidence.save(run.id, {
      signals: [
        { ...signal, id: 'sig-edge', occurredAt: at(1) },
        { ...signal, id: 'sig-old', occurredAt: at(1.5) },
      ],
      executions: [execution('exe-edge', at(2)), execution('exe-old', at(2.5))],
    });
    const windowed = await read(viewer, run.id);
    expect(windowed.signals.map((kept) => kept.id)).toEqual(['sig-1', 'sig-edge']);
    expect(windowed.executions.map((kept) => kept.id)).toEqual(['exe-edge']);
    expect(await rejection(read(ada, 'run-missing'))).toBeInstanceOf(NotFoundError);
    expect(await rejection(read(eve, run.id))).toBeInstanceOf(ForbiddenError);
  });
});
