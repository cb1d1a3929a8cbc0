import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { nanoid } from 'nanoid';
import { beforeAll, describe, expect, it } from 'vitest';
import type { JobQueue } from '../../../lambdas/core/ports/runs.ts';
import type { SynthesisJob } from '../../../lambdas/core/schemas/runs.ts';
import { IDEMPOTENCY_RESERVATION_MS, makeStartSynthesis } from '../../../lambdas/core/use-cases/synthesis.ts';
import { makeIdempotencyStore } from '../../../lambdas/store/idempotency.ts';
import { makePipelineRepository } from '../../../lambdas/store/pipelines.ts';
import { makeQuotaStore } from '../../../lambdas/store/quotas.ts';
import { makeRunRepository } from '../../../lambdas/store/runs.ts';
import { nanoidGenerator } from '../../../lambdas/wiring/clock.ts';
import type { TableNames } from '../../../local/dynamodb.ts';
import { heuristicBudget } from '../../support/budget.ts';
import { type Caller, createCaller, setUpApiEnvironment, storePipeline } from './harness.ts';

/**
 * Idempotency-Key reservations heal: a request that died after reserving its key, before its run
 * existed, holds the key only for seconds; a confirmed key holds for 24 hours.
 */
let db: DynamoDBDocumentClient;
let names: TableNames;
let caller: Caller;

beforeAll(async () => {
  ({ db, names } = await setUpApiEnvironment());
  caller = await createCaller(db, names);
});

function setUp() {
  let now = Date.parse('2030-06-01T12:00:00.000Z');
  const sent: SynthesisJob[] = [];
  const queue: JobQueue = { send: async (job) => void sent.push(job) };
  const pipelines = makePipelineRepository(db, names.Data, names.Events);
  const idempotency = makeIdempotencyStore(db, names.Data);
  const start = makeStartSynthesis({
    runs: makeRunRepository(db, { runs: names.Runs, data: names.Data, events: names.Events }),
    pipelines,
    queue,
    clock: { now: () => new Date(now) },
    ids: nanoidGenerator,
    defaultHandler: 'heuristic-v1',
    budget: heuristicBudget(db, names.Data),
    idempotency,
    quota: { store: makeQuotaStore(db, names.Data), runsPerTeamPerHour: 1_000 },
  });
  return {
    start,
    idempotency,
    pipelines,
    sent,
    advance: (ms: number) => {
      now += ms;
    },
    at: () => new Date(now).toISOString(),
  };
}

describe('an Idempotency-Key whose request died before its run existed', () => {
  it('is busy for a few seconds, then free for a retry that starts the run', async () => {
    const bed = setUp();
    const pipelineId = await storePipeline(db, names, caller.principal.teamId);
    // What a request leaves behind when its Lambda dies right after reserving the key.
    const { createHash } = await import('node:crypto');
    const requestHash = createHash('sha256')
      .update(JSON.stringify([pipelineId, null]))
      .digest('hex');
    await bed.idempotency.reserve(
      caller.principal.teamId,
      'dead-key',
      {
        requestHash,
        runId: nanoid(),
        expiresAt: new Date(Date.parse(bed.at()) + IDEMPOTENCY_RESERVATION_MS).toISOString(),
      },
      bed.at(),
    );

    bed.advance(2_000);
    await expect(bed.start(caller.principal, pipelineId, {}, 'dead-key')).rejects.toMatchObject({
      code: 'CONFLICT',
      message: expect.stringContaining('still in progress'),
    });
    bed.advance(IDEMPOTENCY_RESERVATION_MS);
    const run = await bed.start(caller.principal, pipelineId, {}, 'dead-key');

    expect(run.status).toBe('pending');
    expect(bed.sent).toEqual([{ runId: run.id, jobId: run.jobId, teamId: run.teamId }]);
  });

  it('holds a key whose run started for 24 hours', async () => {
    const bed = setUp();
    const pipelineId = await storePipeline(db, names, caller.principal.teamId);
    const first = await bed.start(caller.principal, pipelineId, {}, 'kept-key');

    bed.advance(23 * 3_600_000);
    const repeat = await bed.start(caller.principal, pipelineId, {}, 'kept-key');
    bed.advance(2 * 3_600_000);
    const afterADay = await bed.start(caller.principal, pipelineId, {}, 'kept-key');

    expect(repeat.id).toBe(first.id);
    expect(afterADay.id).not.toBe(first.id);
    expect(bed.sent).toHaveLength(2);
  });
});
