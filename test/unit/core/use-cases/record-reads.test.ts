/**
 * Reading recorded executions and signals back against the fakes: every read is bounded by the
 * team's retention windows, an execution comes with the signals citing it (bounded in time and
 * number), a missing one is a 404 naming it, and another team's pipeline is refused.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { ForbiddenError, NotFoundError } from '../../../../lambdas/core/errors.ts';
import type { PageRequest } from '../../../../lambdas/core/ports/common.ts';
import type {
  ExecutionFilter,
  RecordReads,
  SignalFilter,
} from '../../../../lambdas/core/ports/record-reads.ts';
import type { Pipeline } from '../../../../lambdas/core/schemas/pipelines.ts';
import type { Execution, Signal } from '../../../../lambdas/core/schemas/records.ts';
import {
  CITING_SIGNALS,
  CITING_WINDOW_MS,
  makeGetExecution,
  makeListExecutions,
  makeListSignals,
  type RecordReadDeps,
} from '../../../../lambdas/core/use-cases/record-reads.ts';
import { makeWorld, principal, rejection, seedPipeline, type World } from './fakes.ts';

const NOW = '2026-01-01T00:00:00.000Z';
const DAY = 86_400_000;
const daysAgo = (days: number) => new Date(Date.parse(NOW) - days * DAY).toISOString();

/** The reads as asked for, answering what a test set. */
class FakeRecordReads implements RecordReads {
  readonly asked: Array<{ read: string; pipelineId: string; filter: unknown; page: PageRequest }> = [];
  execution: Execution | null = null;
  signals: Signal[] = [];

  async listExecutions(pipelineId: string, filter: ExecutionFilter, page: PageRequest) {
    this.asked.push({ read: 'executions', pipelineId, filter, page });
    return { items: this.execution ? [this.execution] : [], nextCursor: null };
  }
  async getExecution(pipelineId: string, executionId: string, since: string) {
    this.asked.push({ read: 'execution', pipelineId, filter: { executionId, since }, page: { limit: 1 } });
    return this.execution;
  }
  async listSignals(pipelineId: string, filter: SignalFilter, page: PageRequest) {
    this.asked.push({ read: 'signals', pipelineId, filter, page });
    return { items: this.signals, nextCursor: 'more' };
  }
}

let world: World;
let pipeline: Pipeline;
let reads: FakeRecordReads;
let deps: RecordReadDeps;
const ada = principal({ role: 'viewer' });
const eve = principal({ userId: 'user-eve', principalId: 'user-eve', teamId: 'team-b' });

beforeEach(async () => {
  world = makeWorld(NOW);
  ({ pipeline } = await seedPipeline(world));
  world.settings.byTeam.set('team-a', {
    ...(await world.settings.get('team-a')),
    executionRetentionDays: 30,
    signalRetentionDays: 10,
  });
  reads = new FakeRecordReads();
  deps = { pipelines: world.pipelines, settings: world.settings, reads, clock: world.clock };
});

const execution = (startedAt: string, source?: 'api' | 'otlp'): Execution => ({
  id: 'exec-1',
  pipelineId: pipeline.id,
  configurationId: pipeline.activeConfigurationId,
  status: 'succeeded',
  durationMs: 40,
  startedAt,
  ...(source ? { source } : {}),
});

describe('listing executions and signals', () => {
  it("reads a pipeline's executions from the execution window, with the filter and page asked for", async () => {
    const page = await makeListExecutions(deps)(
      ada,
      pipeline.id,
      { status: 'failed' },
      { limit: 5, cursor: 'c' },
    );
    expect(page).toEqual({ items: [], nextCursor: null });
    expect(reads.asked).toEqual([
      {
        read: 'executions',
        pipelineId: pipeline.id,
        filter: { status: 'failed', since: daysAgo(30) },
        page: { limit: 5, cursor: 'c' },
      },
    ]);
  });

  it("reads a pipeline's signals from the signal window", async () => {
    const page = await makeListSignals(deps)(ada, pipeline.id, { kind: 'error' }, { limit: 7 });
    expect(page).toEqual({ items: [], nextCursor: 'more' });
    expect(reads.asked).toEqual([
      {
        read: 'signals',
        pipelineId: pipeline.id,
        filter: { kind: 'error', since: daysAgo(10) },
        page: { limit: 7 },
      },
    ]);
  });

  it('reads a window of signal times within the signal window, and nothing for one that ends before it', async () => {
    const list = makeListSignals(deps);
    await list(
      ada,
      pipeline.id,
      { severity: 'critical', occurredFrom: '2000-01-01T00:00:00Z' },
      { limit: 5 },
    );
    const from = new Date(Date.parse(daysAgo(2))).toISOString().slice(0, 19);
    await list(ada, pipeline.id, { occurredFrom: `${from}Z`, occurredUntil: daysAgo(1) }, { limit: 5 });
    expect(reads.asked.map((asked) => asked.filter)).toEqual([
      // An earlier start is retention's; a time to the second is read with its milliseconds.
      { severity: 'critical', since: daysAgo(10) },
      { since: `${from}.000Z`, until: daysAgo(1) },
    ]);
    const before = await list(ada, pipeline.id, { occurredUntil: daysAgo(11) }, { limit: 5 });
    expect(before).toEqual({ items: [], nextCursor: null });
    expect(reads.asked).toHaveLength(2);
    await expect(
      list(ada, pipeline.id, { occurredFrom: daysAgo(1), occurredUntil: daysAgo(2) }, { limit: 5 }),
    ).rejects.toMatchObject({ statusCode: 400, message: expect.stringMatching(/is after until/) });
  });

  it('refuses another team, and names a pipeline that does not exist, before reading records', async () => {
    expect(await rejection(makeListExecutions(deps)(eve, pipeline.id, {}, { limit: 5 }))).toBeInstanceOf(
      ForbiddenError,
    );
    expect(await rejection(makeListSignals(deps)(eve, pipeline.id, {}, { limit: 5 }))).toBeInstanceOf(
      ForbiddenError,
    );
    const missing = await rejection(makeGetExecution(deps)(ada, 'nope', 'exec-1'));
    expect(missing).toBeInstanceOf(NotFoundError);
    expect(missing.message).toBe('Pipeline nope does not exist.');
    expect(reads.asked).toEqual([]);
  });
});

describe('one execution', () => {
  it('is a 404 naming it and its pipeline when none is inside the window', async () => {
    const error = await rejection(makeGetExecution(deps)(ada, pipeline.id, 'exec-9'));
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error.message).toBe(`Execution exec-9 of pipeline ${pipeline.id} does not exist.`);
    expect(reads.asked).toEqual([
      {
        read: 'execution',
        pipelineId: pipeline.id,
        filter: { executionId: 'exec-9', since: daysAgo(30) },
        page: { limit: 1 },
      },
    ]);
  });

  it('comes with the signals citing it from its start to a week later, at most 100', async () => {
    reads.execution = execution(daysAgo(3), 'otlp');
    const cited = {
      id: 's1',
      pipelineId: pipeline.id,
      kind: 'error',
      severity: 'critical',
      message: 'x',
      occurredAt: daysAgo(2),
    };
    reads.signals = [cited as Signal];
    const answer = await makeGetExecution(deps)(ada, pipeline.id, 'exec-1');
    expect(answer).toEqual({ execution: execution(daysAgo(3), 'otlp'), signals: [cited] });
    expect(reads.asked[1]).toEqual({
      read: 'signals',
      pipelineId: pipeline.id,
      filter: { since: daysAgo(3), until: daysAgo(-4), executionId: 'exec-1' },
      page: { limit: 100 },
    });
    expect([CITING_SIGNALS, CITING_WINDOW_MS]).toEqual([100, 7 * DAY]);
  });

  it('reads its signals from the signal window when it started before it, and says an API execution is one', async () => {
    reads.execution = execution(daysAgo(20));
    const answer = await makeGetExecution(deps)(ada, pipeline.id, 'exec-1');
    expect(answer.execution).toEqual({ ...execution(daysAgo(20)), source: 'api' });
    expect(reads.asked[1]?.filter).toEqual({ since: daysAgo(10), until: daysAgo(13), executionId: 'exec-1' });
  });
});
