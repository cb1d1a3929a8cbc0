import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { QuotaExceededError } from '../../../lambdas/core/errors.ts';
import type { JobQueue } from '../../../lambdas/core/ports/runs.ts';
import { makeStartSynthesis } from '../../../lambdas/core/use-cases/synthesis.ts';
import { errorResponse } from '../../../lambdas/http/errors.ts';
import { makeIdempotencyStore } from '../../../lambdas/store/idempotency.ts';
import { makePipelineRepository } from '../../../lambdas/store/pipelines.ts';
import { makeQuotaStore } from '../../../lambdas/store/quotas.ts';
import { makeRunRepository } from '../../../lambdas/store/runs.ts';
import { nanoidGenerator } from '../../../lambdas/wiring/clock.ts';
import type { TableNames } from '../../../local/dynamodb.ts';
import { heuristicBudget } from '../../support/budget.ts';
import { type Caller, createCaller, setUpApiEnvironment, storePipeline } from './harness.ts';

/** The per-team quota of synthesis runs per hour, against DynamoDB Local. */
let db: DynamoDBDocumentClient;
let names: TableNames;
let caller: Caller;
let otherTeam: Caller;

beforeAll(async () => {
  ({ db, names } = await setUpApiEnvironment());
  [caller, otherTeam] = await Promise.all([createCaller(db, names), createCaller(db, names)]);
});

function starter(now: () => number, runsPerTeamPerHour: number) {
  const sent: string[] = [];
  const queue: JobQueue = { send: async (job) => void sent.push(job.runId) };
  const runs = makeRunRepository(db, { runs: names.Runs, data: names.Data, events: names.Events });
  const start = makeStartSynthesis({
    runs,
    pipelines: makePipelineRepository(db, names.Data, names.Events),
    queue,
    clock: { now: () => new Date(now()) },
    ids: nanoidGenerator,
    defaultHandler: 'heuristic-v1',
    budget: heuristicBudget(db, names.Data),
    quota: { store: makeQuotaStore(db, names.Data), runsPerTeamPerHour },
    idempotency: makeIdempotencyStore(db, names.Data),
  });
  return { start, sent, runs };
}

describe('the per-team synthesis quota', () => {
  it('refuses the run past the quota with 429 and Retry-After until the hour ends, then lets runs start again', async () => {
    let now = Date.parse('2031-03-01T10:59:00.000Z');
    const { start, sent } = starter(() => now, 3);
    const pipelineId = await storePipeline(db, names, caller.principal.teamId);

    // Started all at once, as a CI job does: exactly three get through.
    const outcomes = await Promise.allSettled(
      Array.from({ length: 5 }, () => start(caller.principal, pipelineId, {})),
    );
    const refused = outcomes.filter((outcome) => outcome.status === 'rejected');

    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(3);
    expect(sent).toHaveLength(3);
    expect(refused).toHaveLength(2);
    const error = (refused[0] as PromiseRejectedResult).reason;
    expect(error).toBeInstanceOf(QuotaExceededError);
    const response = errorResponse(error);
    expect(response.statusCode).toBe(429);
    expect(JSON.parse(response.body)).toMatchObject({ error: 'RATE_LIMITED' });
    expect(response.headers?.['retry-after']).toBe('60');

    // Another team is not affected.
    const theirs = await storePipeline(db, names, otherTeam.principal.teamId);
    await expect(start(otherTeam.principal, theirs, {})).resolves.toMatchObject({ status: 'pending' });

    // The next hour starts afresh.
    now += 60_000;
    await expect(start(caller.principal, pipelineId, {})).resolves.toMatchObject({ status: 'pending' });
  });
});
