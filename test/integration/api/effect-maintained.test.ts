/*
 * The effect of an approval measured afresh from its maintained state (docs/the-loop.md "The
 * measured effect", docs/scaling.md): after new executions and signals, one recorded late with an old
 * startedAt, a signal recorded before the execution it cites, more than 1,000 executions an arm,
 * and two readers at once, the answer equals a measurement made from scratch. On DynamoDB Local,
 * through the operations' handlers.
 */

import { brotliDecompressSync } from 'node:zlib';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DeleteCommand, type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { nanoid } from 'nanoid';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { makeJudgeRollouts } from '../../../lambdas/core/use-cases/guardrails.ts';
import { effectSnapshotKey } from '../../../lambdas/store/kept-keys.ts';
import { effectCacheKey, effectStateKey, type ItemKey } from '../../../lambdas/store/keys.ts';
import { makePipelineRepository } from '../../../lambdas/store/pipelines.ts';
import { makeRolloutRepository } from '../../../lambdas/store/rollouts.ts';
import { makeRunRepository } from '../../../lambdas/store/runs.ts';
import { nanoidGenerator, systemClock } from '../../../lambdas/wiring/clock.ts';
import type { TableNames } from '../../../local/dynamodb.ts';
import { DEMO_SLOTS } from '../../../local/seed.ts';
import {
  apiEvent,
  type Caller,
  createCaller,
  type HttpLambda as Handler,
  invoke,
  lambdaContext,
  loadHandlers,
  type SqsLambda,
  setUpApiEnvironment,
  sqsEvent,
} from './harness.ts';

const sqs = mockClient(SQSClient);
let admin: Caller;
let http: Record<string, Handler>;
let worker: SqsLambda;
let db: DynamoDBDocumentClient;
let names: TableNames;

beforeAll(async () => {
  ({ db, names } = await setUpApiEnvironment());
  admin = await createCaller(db, names);
  http = await loadHandlers([
    'create-pipeline',
    'record-signals',
    'record-executions',
    'synthesize-pipeline',
    'get-synthesis-run',
    'approve-synthesis-run',
    'get-pipeline-rollout',
    'rollback-pipeline-rollout',
    'get-synthesis-run-effect',
  ]);
  worker = (await import('../../../lambdas/handlers/process-synthesis-jobs.ts')).handler as SqsLambda;
});

beforeEach(() => {
  sqs.reset();
  sqs.on(SendMessageCommand).resolves({ MessageId: 'm' });
});

const call = (entry: string, input: Omit<Parameters<typeof apiEvent>[0], 'principal'>) =>
  invoke(http[entry] as Handler, apiEvent({ ...input, principal: admin.principal }));

async function recordSignals(pipelineId: string, signals: object[]) {
  const recorded = await call('record-signals', {
    method: 'POST',
    resource: '/pipelines/{pipelineId}/signals',
    pathParameters: { pipelineId },
    body: { signals },
  });
  expect(recorded.status).toBe(201);
}

interface NewExecution {
  id?: string;
  configurationId: string;
  failed?: boolean;
  startedAt?: string;
  durationMs?: number;
}

async function recordExecutions(pipelineId: string, executions: NewExecution[]) {
  for (let i = 0; i < executions.length; i += 100) {
    const recorded = await call('record-executions', {
      method: 'POST',
      resource: '/pipelines/{pipelineId}/executions',
      pathParameters: { pipelineId },
      body: {
        executions: executions.slice(i, i + 100).map((execution) => ({
          ...(execution.id ? { id: execution.id } : {}),
          configurationId: execution.configurationId,
          status: execution.failed ? 'failed' : 'succeeded',
          durationMs: execution.durationMs ?? 100,
          ...(execution.startedAt ? { startedAt: execution.startedAt } : {}),
          slotResults: [
            {
              slotId: 'answer-model',
              status: execution.failed ? 'failed' : 'succeeded',
              durationMs: (execution.durationMs ?? 100) - 20,
            },
          ],
        })),
      },
    });
    expect(recorded.status).toBe(201);
  }
}

const effect = async (id: string) => {
  const answered = await call('get-synthesis-run-effect', {
    method: 'GET',
    resource: '/synthesis-runs/{id}/effect',
    pathParameters: { id },
  });
  expect(answered.status).toBe(200);
  return answered.body;
};

/** The figures, without when they were measured. */
const figures = (measured: { measuredAt: string }) => ({ ...measured, measuredAt: undefined });

/** The effect measured from scratch: the kept state removed first (then kept again, as a first read does). */
async function fromScratch(pipelineId: string, runId: string) {
  await db.send(new DeleteCommand({ TableName: names.Data, Key: effectCacheKey(pipelineId, runId) }));
  return effect(runId);
}

/** A pipeline with a run approved into a rollout at 50 % (judged by nothing automatically). */
async function rolloutOfRun(autoRollback = false) {
  const created = await call('create-pipeline', {
    method: 'POST',
    resource: '/pipelines',
    body: { name: 'bot', slots: DEMO_SLOTS },
  });
  const pipeline = created.body as { id: string; activeConfigurationId: string };
  await recordSignals(
    pipeline.id,
    Array.from({ length: 4 }, () => ({
      kind: 'truncation',
      severity: 'warning',
      message: 'Answer truncated: stop_reason max_tokens',
      slotId: 'answer-model',
    })),
  );
  const started = await call('synthesize-pipeline', {
    method: 'POST',
    resource: '/pipelines/{pipelineId}/synthesize',
    pathParameters: { pipelineId: pipeline.id },
    body: {},
  });
  const body = sqs.commandCalls(SendMessageCommand).at(-1)?.args[0].input.MessageBody as string;
  await worker(sqsEvent([body]), lambdaContext());
  const runId = started.body.id as string;
  const run = (
    await call('get-synthesis-run', {
      method: 'GET',
      resource: '/synthesis-runs/{id}',
      pathParameters: { id: runId },
    })
  ).body;
  expect(run.status).toBe('generated');
  const change = run.changes.find((candidate: { slotId: string }) => candidate.slotId === 'answer-model');
  const approved = await call('approve-synthesis-run', {
    method: 'POST',
    resource: '/synthesis-runs/{id}/approve',
    pathParameters: { id: run.id },
    body: { changeIds: [change.id], rollout: { percent: 50, minExecutions: 30, autoRollback } },
  });
  expect(approved.status).toBe(200);
  return {
    pipelineId: pipeline.id,
    runId: run.id as string,
    base: pipeline.activeConfigurationId,
    candidate: approved.body.appliedConfigurationId as string,
  };
}

const many = (n: number, execution: NewExecution) => Array.from({ length: n }, () => ({ ...execution }));

describe('the effect measured afresh from its maintained state', () => {
  it('counts new executions and signals, one recorded late with an old startedAt, as a measurement from scratch does', async () => {
    const { pipelineId, runId, base, candidate } = await rolloutOfRun();
    const known = `exec-${nanoid(8)}`;
    await recordExecutions(pipelineId, [
      ...many(20, { configurationId: base }),
      ...many(5, { configurationId: base, failed: true }),
      { id: known, configurationId: candidate, failed: true },
      ...many(20, { configurationId: candidate }),
    ]);
    await recordSignals(pipelineId, [
      { kind: 'error', severity: 'critical', message: 'boom', executionId: known },
    ]);
    const first = await effect(runId);
    expect(first.arms.applied).toMatchObject({ executions: 21, failed: 1, signals: { critical: 1 } });

    // Recorded now, started two days ago: its startedAt sorts before everything measured so far.
    const late = `late-${nanoid(8)}`;
    const twoDaysAgo = new Date(Date.now() - 2 * 86_400_000).toISOString();
    // A signal recorded before the execution it cites.
    const early = `early-${nanoid(8)}`;
    await recordSignals(pipelineId, [
      { kind: 'error', severity: 'warning', message: 'slow', executionId: early },
      { kind: 'error', severity: 'info', message: 'noted', executionId: known },
    ]);
    // Measured while the signal's execution is not recorded yet.
    expect((await effect(runId)).arms.applied.signals).toEqual({ info: 1, warning: 0, critical: 1 });
    await recordExecutions(pipelineId, [
      { id: late, configurationId: candidate, failed: true, startedAt: twoDaysAgo, durationMs: 900 },
    ]);
    // Alone: nothing else new, and it started before everything measured so far.
    expect((await effect(runId)).arms.applied).toMatchObject({ executions: 22, failed: 2, from: twoDaysAgo });
    await recordExecutions(pipelineId, [
      { id: early, configurationId: base, failed: true },
      ...many(3, { configurationId: base }),
    ]);
    await recordSignals(pipelineId, [
      { kind: 'error', severity: 'critical', message: 'late', executionId: late },
    ]);

    const fresh = await effect(runId);

    expect(fresh.arms.applied).toMatchObject({
      executions: 22,
      failed: 2,
      from: twoDaysAgo,
      signals: { info: 1, warning: 0, critical: 2 },
    });
    expect(fresh.arms.base).toMatchObject({
      executions: 29,
      failed: 6,
      signals: { info: 0, warning: 1, critical: 0 },
    });
    expect(fresh.slots[0]).toMatchObject({ slotId: 'answer-model', applied: { executions: 22, failed: 2 } });
    expect(fresh.measuredAt > first.measuredAt || fresh.measuredAt === first.measuredAt).toBe(true);
    expect(figures(fresh)).toEqual(figures(await fromScratch(pipelineId, runId)));
  });

  it('counts every execution of an arm, and keeps a sample of the newest 1,000 for the rest, dropping the oldest as new ones arrive', async () => {
    const { pipelineId, runId, base, candidate } = await rolloutOfRun();
    await recordExecutions(pipelineId, [
      ...many(1_020, { configurationId: base, durationMs: 100 }),
      ...many(40, { configurationId: candidate }),
    ]);
    const full = await effect(runId);
    // Counted exactly with the recording (before the shards' counts: the newest 1,000 only).
    expect(full.arms.base).toMatchObject({ executions: 1_020, failed: 0 });

    await recordExecutions(pipelineId, many(10, { configurationId: base, failed: true, durationMs: 500 }));
    const fresh = await effect(runId);

    expect(fresh.arms.base).toMatchObject({ executions: 1_030, failed: 10 });
    // The durations come from the sample: the newest 1,000, ten of them the slow failures.
    expect(fresh.arms.base.durationMs).toEqual({ p50: 100, p95: 100 });
    expect(figures(fresh)).toEqual(figures(await fromScratch(pipelineId, runId)));
    const get = async (Key: ItemKey) => (await db.send(new GetCommand({ TableName: names.Data, Key }))).Item;
    const head = await get(effectCacheKey(pipelineId, runId));
    expect(head?.snapshotShard).toEqual(expect.any(Number));
    const kept = await get(effectSnapshotKey(pipelineId, runId, head?.snapshotShard));
    // The kept snapshot of 1,000 + 40 executions, compressed: far below the ~95 KB of its JSON, and
    // under its own key, not in the pipeline's partition (read by every poll).
    expect(kept?.snapshot).toBe(head?.snapshot);
    expect(kept?.packed).toBeInstanceOf(Uint8Array);
    expect(kept?.packed.length).toBeGreaterThan(5_000);
    expect(kept?.packed.length).toBeLessThan(40_000);
    expect(await get(effectStateKey(pipelineId, runId))).toBeUndefined();
  });

  it('still reads a state kept as plain JSON in the pipeline partition by versions before', async () => {
    const { pipelineId, runId, base, candidate } = await rolloutOfRun();
    await recordExecutions(pipelineId, [
      ...many(300, { configurationId: base, durationMs: 100 }),
      ...many(30, { configurationId: candidate, failed: true }),
    ]);
    const first = await effect(runId);
    const get = async (Key: ItemKey) => (await db.send(new GetCommand({ TableName: names.Data, Key }))).Item;
    const head = await get(effectCacheKey(pipelineId, runId));
    const kept = await get(effectSnapshotKey(pipelineId, runId, head?.snapshotShard));
    // As versions before wrote them: a JSON string at the old key, no shard on the effect item (a
    // new name, so no environment holds it in memory).
    const snapshot = `before-${nanoid()}`;
    const { snapshotShard: _shard, ...rest } = head ?? {};
    await db.send(
      new PutCommand({
        TableName: names.Data,
        Item: { ...rest, snapshot, delta: brotliDecompressSync(head?.delta).toString('utf8') },
      }),
    );
    const state = brotliDecompressSync(kept?.packed).toString('utf8');
    await db.send(
      new PutCommand({
        TableName: names.Data,
        Item: { ...effectStateKey(pipelineId, runId), snapshot, state },
      }),
    );
    await recordExecutions(pipelineId, many(5, { configurationId: candidate }));
    const next = await effect(runId);

    expect(next.arms.applied.executions).toBe(first.arms.applied.executions + 5);
    // Read, not rebuilt: the effect item still names the old snapshot, with a delta since it.
    expect((await get(effectCacheKey(pipelineId, runId)))?.snapshot).toBe(snapshot);
    expect(figures(next)).toEqual(figures(await fromScratch(pipelineId, runId)));
  });

  it('counts all 5,000 executions of each arm exactly, and a batch sent again once', async () => {
    const { pipelineId, runId, base, candidate } = await rolloutOfRun();
    await recordExecutions(pipelineId, [
      ...many(4_500, { configurationId: base }),
      ...many(500, { configurationId: base, failed: true }),
      ...many(4_700, { configurationId: candidate }),
      ...many(300, { configurationId: candidate, failed: true }),
    ]);
    const again = many(100, { configurationId: candidate, failed: true }).map((execution) => ({
      ...execution,
      id: `again-${nanoid(8)}`,
    }));
    await recordExecutions(pipelineId, again);
    const resent = await call('record-executions', {
      method: 'POST',
      resource: '/pipelines/{pipelineId}/executions',
      pathParameters: { pipelineId },
      body: {
        executions: again.map((execution) => ({
          id: execution.id,
          configurationId: execution.configurationId,
          status: 'failed',
          durationMs: 100,
        })),
      },
    });
    expect(resent.status).toBe(409);
    const measured = await effect(runId);
    expect(measured.arms.base).toMatchObject({ executions: 5_000, failed: 500 });
    expect(measured.arms.applied).toMatchObject({ executions: 5_100, failed: 400 });
    expect(measured.verdict).toBe('improved');
  }, 240_000);

  it('past the sample, answers exact counts at once and reads the sample again once an arm grew by 1 %', async () => {
    const { pipelineId, runId, base, candidate } = await rolloutOfRun();
    await recordExecutions(pipelineId, [
      ...many(1_010, { configurationId: base }),
      ...many(1_010, { configurationId: candidate }),
    ]);
    expect((await effect(runId)).arms.applied).toMatchObject({ executions: 1_010, signals: { critical: 0 } });
    const cited = `cited-${nanoid(8)}`;
    await recordExecutions(pipelineId, [
      { id: cited, configurationId: candidate, failed: true },
      ...many(2, { configurationId: base, failed: true }),
    ]);
    await recordSignals(pipelineId, [
      { kind: 'error', severity: 'critical', message: 'boom', executionId: cited },
    ]);

    // Grown by less than 1 %: the counts are exact, the signals are those of the kept sample.
    const counted = await effect(runId);
    expect(counted.arms.applied).toMatchObject({ executions: 1_011, failed: 1, signals: { critical: 0 } });
    expect(counted.arms.base).toMatchObject({ executions: 1_012, failed: 2 });

    await recordExecutions(pipelineId, many(10, { configurationId: candidate }));
    // Grown by more than 1 % since the sample was read: read again, the signal counted.
    const sampled = await effect(runId);
    expect(sampled.arms.applied).toMatchObject({ executions: 1_021, failed: 1, signals: { critical: 1 } });
    expect(figures(sampled)).toEqual(figures(await fromScratch(pipelineId, runId)));
  }, 120_000);

  it('loses nothing when two readers measure at once', async () => {
    const { pipelineId, runId, base, candidate } = await rolloutOfRun();
    await recordExecutions(pipelineId, [
      ...many(30, { configurationId: base }),
      ...many(30, { configurationId: candidate }),
    ]);
    await effect(runId);
    for (let round = 1; round <= 3; round++) {
      await recordExecutions(pipelineId, [
        ...many(round, { configurationId: base, failed: true }),
        ...many(2 * round, { configurationId: candidate, failed: true }),
      ]);
      const [one, other] = await Promise.all([effect(runId), effect(runId)]);
      expect(figures(one)).toEqual(figures(other));
      await recordExecutions(pipelineId, many(1, { configurationId: candidate }));
      const next = await effect(runId);
      // What the losing reader saw is not lost: the next measurement counts all of it.
      expect(next.arms.applied.executions).toBe(one.arms.applied.executions + 1);
    }
    const last = await effect(runId);
    expect(last.arms.base).toMatchObject({ executions: 36, failed: 6 });
    expect(last.arms.applied).toMatchObject({ executions: 45, failed: 12 });
    expect(figures(last)).toEqual(figures(await fromScratch(pipelineId, runId)));
  });

  it('stops counting at the end of a rollout: what is recorded after it is not counted', async () => {
    const { pipelineId, runId, base, candidate } = await rolloutOfRun();
    await recordExecutions(pipelineId, [
      ...many(10, { configurationId: base }),
      ...many(10, { configurationId: candidate }),
    ]);
    expect((await effect(runId)).arms.base.executions).toBe(10);
    const ended = await call('rollback-pipeline-rollout', {
      method: 'POST',
      resource: '/pipelines/{pipelineId}/rollout/rollback',
      pathParameters: { pipelineId },
      body: null,
      headers: { 'x-requested-with': 'test' },
    });
    expect(ended.status).toBe(200);
    await recordExecutions(pipelineId, many(7, { configurationId: base, failed: true }));

    const after = await effect(runId);

    expect(after.arms.base).toMatchObject({ executions: 10, failed: 0 });
    expect(figures(after)).toEqual(figures(await fromScratch(pipelineId, runId)));
  });
});
