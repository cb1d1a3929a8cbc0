/**
 * Data lifecycle through the operations' handlers and the jobs, against DynamoDB Local: team
 * retention windows (TTL at write, reads bounded by the window, the retention job), deleting a
 * pipeline (404 at once, the job's exact counts, even when it dies halfway), the receipt.
 */

import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import {
  BatchWriteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
} from '@aws-sdk/lib-dynamodb';
import type { Context } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { nanoid } from 'nanoid';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { RETENTION_DAYS } from '../../../lambdas/core/lifecycle.ts';
import type { Execution, Signal } from '../../../lambdas/core/schemas/records.ts';
import { listTeamEvents } from '../../../lambdas/store/events.ts';
import { makeEvidenceStore } from '../../../lambdas/store/evidence.ts';
import { makeExportStore } from '../../../lambdas/store/export.ts';
import {
  approvalRulesKey,
  effectCacheKey,
  evaluationPartition,
  evaluationSetKey,
  evidenceKey,
  executionIdsPartition,
  executionsPartition,
  pipelinePartition,
  RECORD_SOURCES,
  retentionDueKey,
  rolloutKey,
  type Shard,
  signalIdKey,
  signalIdsPartition,
  signalKey,
  signalsPartition,
} from '../../../lambdas/store/keys.ts';
import { makeDeletionStore } from '../../../lambdas/store/pipeline-deletion.ts';
import { makePipelineRepository } from '../../../lambdas/store/pipelines.ts';
import { makeRunRepository } from '../../../lambdas/store/runs.ts';
import { SERIES_PARTITIONS } from '../../../lambdas/store/series-keys.ts';
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

const LIFECYCLE_QUEUE_URL = 'https://sqs.us-east-1.amazonaws.com/123456789012/lifecycle-jobs';
const DAY_MS = 86_400_000;
const sqs = mockClient(SQSClient);
let db: DynamoDBDocumentClient;
let names: TableNames;
let admin: Caller;
let member: Caller;
let viewer: Caller;
let otherTeam: Caller;
let http: Record<string, Handler>;
let deleter: SqsLambda;
let retentionJob: (event: unknown, context: Context) => Promise<{ removed: number }>;

beforeAll(async () => {
  ({ db, names } = await setUpApiEnvironment({ LIFECYCLE_QUEUE_URL }));
  admin = await createCaller(db, names);
  otherTeam = await createCaller(db, names);
  // A member and a viewer of the admin's team.
  member = { ...admin, principal: { ...admin.principal, role: 'member', userId: 'member-1' } };
  viewer = { ...admin, principal: { ...admin.principal, role: 'viewer', userId: 'viewer-1' } };
  http = await loadHandlers([
    'create-pipeline',
    'get-pipeline',
    'record-signals',
    'record-executions',
    'get-team-settings',
    'update-team-settings',
    'delete-pipeline',
    'get-deletion',
    'get-synthesis-run',
    'synthesize-pipeline',
    'export-pipeline',
    'get-serving-configuration',
  ]);
  deleter = (await import('../../../lambdas/handlers/delete-pipeline-data.ts')).handler as SqsLambda;
  retentionJob = (await import('../../../lambdas/handlers/apply-retention.ts'))
    .handler as typeof retentionJob;
});

beforeEach(() => {
  sqs.reset();
  sqs.on(SendMessageCommand).resolves({ MessageId: 'm-1' });
});

const call = (handler: string, input: Parameters<typeof apiEvent>[0]) =>
  invoke(http[handler] as Handler, apiEvent(input));

const settingsOf = (caller: Caller, teamId = caller.principal.teamId) =>
  call('get-team-settings', {
    method: 'GET',
    resource: '/teams/{teamId}/settings',
    pathParameters: { teamId },
    principal: caller.principal,
  });

const patchSettings = (caller: Caller, body: object, teamId = caller.principal.teamId) =>
  call('update-team-settings', {
    method: 'PATCH',
    resource: '/teams/{teamId}/settings',
    pathParameters: { teamId },
    body,
    principal: caller.principal,
  });

async function createPipeline(
  caller: Caller = admin,
): Promise<{ id: string; activeConfigurationId: string }> {
  const response = await call('create-pipeline', {
    method: 'POST',
    resource: '/pipelines',
    body: { name: `p ${nanoid(4)}`, slots: DEMO_SLOTS },
    principal: caller.principal,
  });
  expect(response.status).toBe(201);
  return response.body;
}

const daysAgo = (days: number) => new Date(Date.now() - days * DAY_MS).toISOString();

const signal = (pipelineId: string, occurredAt: string, id = nanoid()): Signal => ({
  id,
  pipelineId,
  kind: 'error',
  severity: 'warning',
  message: `signal ${id}`,
  occurredAt,
});

const execution = (pipelineId: string, startedAt: string, id = nanoid()): Execution => ({
  id,
  pipelineId,
  configurationId: 'c',
  status: 'failed',
  durationMs: 5,
  startedAt,
});

/** Every item of a partition of the data table (a consistent Query, all pages). */
/** Every item of a sharded partition: its legacy source and every shard. */
async function shardItems(
  partition: (pipelineId: string, shard: Shard) => string,
  pipelineId: string,
): Promise<Record<string, unknown>[]> {
  const all = await Promise.all(RECORD_SOURCES.map((shard) => partitionItems(partition(pipelineId, shard))));
  return all.flat();
}

async function partitionItems(pk: string): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await db.send(
      new QueryCommand({
        TableName: names.Data,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': pk },
        ConsistentRead: true,
        ExclusiveStartKey: start,
      }),
    );
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
}

/** Runs the deletion job as its queue does: each message it sends is delivered to it again. */
async function runDeletionJob(deletionId: string, remainingMs = 30_000): Promise<number> {
  let deliveries = 0;
  let pending = [JSON.stringify({ deletionId })];
  while (pending.length > 0) {
    sqs.reset();
    sqs.on(SendMessageCommand).resolves({ MessageId: 'm' });
    const response = await deleter(sqsEvent(pending), {
      ...lambdaContext(),
      getRemainingTimeInMillis: () => remainingMs,
    });
    expect(response.batchItemFailures).toEqual([]);
    deliveries++;
    pending = sqs.commandCalls(SendMessageCommand).map((sent) => String(sent.args[0].input.MessageBody));
  }
  return deliveries;
}

describe('team settings', () => {
  it('are 90 days by default, changed by an admin, and refused outside 1–3650 days', async () => {
    const caller = await createCaller(db, names);
    const before = await settingsOf(caller);
    expect(before.status).toBe(200);
    expect(before.body).toMatchObject({ signalRetentionDays: 90, executionRetentionDays: 90 });

    const changed = await patchSettings(caller, { signalRetentionDays: 30 });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ signalRetentionDays: 30, executionRetentionDays: 90 });

    for (const days of [0, 4000, 1.5]) {
      const refused = await patchSettings(caller, { executionRetentionDays: days });
      expect(refused.status).toBe(400);
    }
    expect((await settingsOf(caller)).body).toMatchObject({
      signalRetentionDays: 30,
      executionRetentionDays: 90,
    });
    // The one accepted change wrote its event, with who made it; the refused ones none.
    const updates = (await teamEvents(caller.principal.teamId)).filter(
      (event) => event.type === 'team_settings.updated',
    );
    expect(updates).toEqual([
      expect.objectContaining({
        data: expect.objectContaining({
          actor: expect.objectContaining({ userId: caller.principal.userId }),
        }),
      }),
    ]);
  });

  it('are changed by admins only, and another team neither reads nor changes them', async () => {
    expect((await patchSettings(member, { signalRetentionDays: 10 })).status).toBe(403);
    expect((await patchSettings(viewer, { signalRetentionDays: 10 })).status).toBe(403);
    expect((await settingsOf(otherTeam, admin.principal.teamId)).status).toBe(403);
    expect((await patchSettings(otherTeam, { signalRetentionDays: 10 }, admin.principal.teamId)).status).toBe(
      403,
    );
    expect((await settingsOf(viewer)).status).toBe(200);
  });
});

describe('retention', () => {
  it('refuses a record already outside the window with a 400 naming it, and sets the TTL at write', async () => {
    const caller = await createCaller(db, names);
    await patchSettings(caller, { signalRetentionDays: 7 });
    const pipeline = await createPipeline(caller);
    const old = await call('record-signals', {
      method: 'POST',
      resource: '/pipelines/{pipelineId}/signals',
      pathParameters: { pipelineId: pipeline.id },
      body: {
        signals: [{ id: 'too-old', kind: 'error', severity: 'info', message: 'x', occurredAt: daysAgo(8) }],
      },
      principal: caller.principal,
    });
    expect(old.status).toBe(400);
    expect(old.body.message).toMatch(/retention window of 7 days/);
    expect(old.body.message).toMatch(/too-old/);
    expect(await shardItems(signalsPartition, pipeline.id)).toEqual([]);

    const occurredAt = daysAgo(2);
    const recorded = await call('record-signals', {
      method: 'POST',
      resource: '/pipelines/{pipelineId}/signals',
      pathParameters: { pipelineId: pipeline.id },
      body: { signals: [{ id: 'fresh', kind: 'error', severity: 'info', message: 'x', occurredAt }] },
      principal: caller.principal,
    });
    expect(recorded.status).toBe(201);
    const expected = Math.ceil((Date.parse(occurredAt) + 7 * DAY_MS) / 1000);
    const stored = await db.send(
      new GetCommand({
        TableName: names.Data,
        Key: signalKey({ pipelineId: pipeline.id, occurredAt, id: 'fresh' }),
      }),
    );
    expect(stored.Item?.expiresAtEpoch).toBe(expected);
    const marker = await db.send(
      new GetCommand({ TableName: names.Data, Key: signalIdKey(pipeline.id, 'fresh') }),
    );
    expect(marker.Item?.expiresAtEpoch).toBe(expected);
  });

  it('never reads a record outside the window, and the job removes them (with their id markers) after a shortening', async () => {
    const caller = await createCaller(db, names);
    const pipeline = await createPipeline(caller);
    const repository = makePipelineRepository(db, names.Data);
    // Recorded while the window was 90 days.
    await repository.recordSignals(
      [
        signal(pipeline.id, daysAgo(40), 'old-1'),
        signal(pipeline.id, daysAgo(20), 'old-2'),
        signal(pipeline.id, daysAgo(1), 'new-1'),
      ],
      RETENTION_DAYS.default,
    );
    await repository.recordExecutions(
      [execution(pipeline.id, daysAgo(40), 'old-e'), execution(pipeline.id, daysAgo(1), 'new-e')],
      RETENTION_DAYS.default,
      null,
    );

    expect(
      (await patchSettings(caller, { signalRetentionDays: 10, executionRetentionDays: 30 })).status,
    ).toBe(200);
    const due = await db.send(
      new GetCommand({ TableName: names.Data, Key: retentionDueKey(caller.principal.teamId) }),
    );
    expect(due.Item).toBeDefined();

    // The window-bounded read (what synthesis uses) already leaves them out.
    expect((await repository.recentSignals(pipeline.id, 100, daysAgo(10))).map((s) => s.id)).toEqual([
      'new-1',
    ]);

    await retentionJob({}, lambdaContext());
    expect((await shardItems(signalsPartition, pipeline.id)).map((item) => item.id)).toEqual(['new-1']);
    expect((await shardItems(signalIdsPartition, pipeline.id)).map((item) => item.sk)).toEqual(['new-1']);
    expect((await shardItems(executionsPartition, pipeline.id)).map((item) => item.id)).toEqual(['new-e']);
    expect((await shardItems(executionIdsPartition, pipeline.id)).map((item) => item.sk)).toEqual(['new-e']);
    // The series keep the longer window (30 days): the buckets of 40 days ago are gone, yesterday's stay.
    const seriesTimes = (
      await Promise.all(SERIES_PARTITIONS.map((partition) => partitionItems(partition(pipeline.id))))
    )
      .flat()
      .map((item) => String(item.sk).slice(0, 10));
    expect(seriesTimes.length).toBeGreaterThan(0);
    expect(seriesTimes.filter((day) => day < daysAgo(30).slice(0, 10))).toEqual([]);
    const done = await db.send(
      new GetCommand({ TableName: names.Data, Key: retentionDueKey(caller.principal.teamId) }),
    );
    expect(done.Item).toBeUndefined();
  });
});

describe('evidence copies', () => {
  it('expire with the records they copy', async () => {
    const evidence = makeEvidenceStore(db, names.Data);
    const occurredAt = daysAgo(3);
    await evidence.save(
      'run-ttl',
      { signals: [signal('p', occurredAt, 'cited')], executions: [] },
      {
        signalDays: 7,
        executionDays: 30,
      },
    );
    const stored = await db.send(
      new GetCommand({ TableName: names.Data, Key: evidenceKey('run-ttl', 'signal', 'cited') }),
    );
    expect(stored.Item?.expiresAtEpoch).toBe(Math.ceil((Date.parse(occurredAt) + 7 * DAY_MS) / 1000));
  });

  it('are removed whole when a run takes them back (its pipeline was deleted as it generated)', async () => {
    const evidence = makeEvidenceStore(db, names.Data);
    const signals = Array.from({ length: 60 }, (_, i) => signal('p', daysAgo(1), `taken-${i}`));
    await evidence.save('run-taken-back', { signals, executions: [] }, { signalDays: 90, executionDays: 90 });
    expect((await evidence.load('run-taken-back')).signals).toHaveLength(60);

    await evidence.remove('run-taken-back');

    expect(await evidence.load('run-taken-back')).toEqual({ signals: [], executions: [] });
  });
});

describe('deleting a pipeline', () => {
  const deletePipeline = (caller: Caller, pipelineId: string) =>
    call('delete-pipeline', {
      method: 'DELETE',
      resource: '/pipelines/{pipelineId}',
      pathParameters: { pipelineId },
      principal: caller.principal,
    });
  const getDeletion = (caller: Caller, id: string) =>
    call('get-deletion', {
      method: 'GET',
      resource: '/deletions/{id}',
      pathParameters: { id },
      principal: caller.principal,
    });

  /** A pipeline with signals, executions, a run with evidence, and an idempotency key. */
  async function populatedPipeline(signals: number, executions: number) {
    const pipeline = await createPipeline();
    const repository = makePipelineRepository(db, names.Data);
    for (let start = 0; start < signals; start += 100) {
      await repository.recordSignals(
        Array.from({ length: Math.min(100, signals - start) }, (_, i) =>
          signal(pipeline.id, new Date(Date.now() - (start + i) * 1000).toISOString()),
        ),
        RETENTION_DAYS.default,
      );
    }
    for (let start = 0; start < executions; start += 100) {
      await repository.recordExecutions(
        Array.from({ length: Math.min(100, executions - start) }, (_, i) =>
          execution(pipeline.id, new Date(Date.now() - (start + i) * 1000).toISOString()),
        ),
        RETENTION_DAYS.default,
        null,
      );
    }
    const idempotencyKey = `key-${nanoid()}`;
    const run = await call('synthesize-pipeline', {
      method: 'POST',
      resource: '/pipelines/{pipelineId}/synthesize',
      pathParameters: { pipelineId: pipeline.id },
      headers: { 'idempotency-key': idempotencyKey },
      body: {},
      principal: admin.principal,
    });
    expect(run.status).toBe(202);
    await db.send(
      new BatchWriteCommand({
        RequestItems: {
          [names.Data]: [
            {
              PutRequest: {
                Item: { ...evidenceKey(run.body.id, 'signal', 'x'), kind: 'signal', record: {} },
              },
            },
          ],
        },
      }),
    );
    return { pipeline, runId: String(run.body.id), idempotencyKey };
  }

  it('is refused to a viewer, a member and another team, and changes nothing', async () => {
    const pipeline = await createPipeline();
    expect((await deletePipeline(viewer, pipeline.id)).status).toBe(403);
    expect((await deletePipeline(member, pipeline.id)).status).toBe(403);
    expect((await deletePipeline(otherTeam, pipeline.id)).status).toBe(403);
    const still = await call('get-pipeline', {
      method: 'GET',
      resource: '/pipelines/{pipelineId}',
      pathParameters: { pipelineId: pipeline.id },
      principal: admin.principal,
    });
    expect(still.status).toBe(200);
    expect(sqs.commandCalls(SendMessageCommand)).toHaveLength(0);
  });

  it('answers 202 with a receipt, 404 for everything of the pipeline at once, then completes with exact counts', async () => {
    const { pipeline, runId, idempotencyKey } = await populatedPipeline(230, 120);
    const other = await populatedPipeline(3, 2);

    const response = await deletePipeline(admin, pipeline.id);
    expect(response.status).toBe(202);
    expect(response.body).toMatchObject({ pipelineId: pipeline.id, status: 'pending', completedAt: null });
    // The audit log keeps that it happened and by whom: ids and a state, never the content.
    const deleted = (await teamEvents(admin.principal.teamId, { pipelineId: pipeline.id })).filter(
      (event) => event.type === 'pipeline.deleted',
    );
    expect(deleted).toEqual([
      expect.objectContaining({
        data: {
          teamId: admin.principal.teamId,
          pipelineId: pipeline.id,
          status: 'pending',
          actor: expect.objectContaining({ userId: admin.principal.userId }),
        },
      }),
    ]);
    expect(response.headers.location).toMatch(new RegExp(`/deletions/${response.body.id}$`));

    const asAdmin = { principal: admin.principal, pathParameters: { pipelineId: pipeline.id } };
    expect(
      (await call('get-pipeline', { ...asAdmin, method: 'GET', resource: '/pipelines/{pipelineId}' })).status,
    ).toBe(404);
    const recording = await call('record-signals', {
      ...asAdmin,
      method: 'POST',
      resource: '/pipelines/{pipelineId}/signals',
      body: { signals: [{ kind: 'error', severity: 'info', message: 'x' }] },
    });
    expect(recording.status).toBe(404);
    const run = await call('get-synthesis-run', {
      method: 'GET',
      resource: '/synthesis-runs/{id}',
      pathParameters: { id: runId },
      principal: admin.principal,
    });
    expect(run.status).toBe(404);
    const replay = await call('synthesize-pipeline', {
      ...asAdmin,
      method: 'POST',
      resource: '/pipelines/{pipelineId}/synthesize',
      headers: { 'idempotency-key': idempotencyKey },
      body: {},
    });
    expect(replay.status).toBe(404);
    expect((await deletePipeline(admin, pipeline.id)).status).toBe(404);

    await runDeletionJob(response.body.id);
    const receipt = await getDeletion(admin, response.body.id);
    expect(receipt.status).toBe(200);
    expect(receipt.body).toMatchObject({
      status: 'completed',
      counts: { configurations: 1, activations: 0, rollouts: 0, signals: 230, executions: 120, runs: 1 },
    });
    expect(receipt.body.completedAt).not.toBeNull();
    expect((await getDeletion(otherTeam, response.body.id)).status).toBe(403);

    for (const pk of [pipelinePartition(pipeline.id), `RUN#${runId}#EVIDENCE`]) {
      expect(await partitionItems(pk)).toEqual([]);
    }
    // Its series too, every grain's shards and packs; the other pipeline's stay.
    const seriesItems = async (pipelineId: string) =>
      (await Promise.all(SERIES_PARTITIONS.map((partition) => partitionItems(partition(pipelineId))))).flat();
    expect(await seriesItems(pipeline.id)).toEqual([]);
    expect((await seriesItems(other.pipeline.id)).length).toBeGreaterThan(0);
    for (const partition of [
      signalsPartition,
      signalIdsPartition,
      executionsPartition,
      executionIdsPartition,
    ]) {
      expect(await shardItems(partition, pipeline.id)).toEqual([]);
    }
    expect(await makeRunRepository(db, { runs: names.Runs }).get(runId)).toBeNull();
    const keys = await db.send(
      new QueryCommand({
        TableName: names.Data,
        IndexName: 'gsi1',
        KeyConditionExpression: 'gsi1pk = :pk',
        ExpressionAttributeValues: { ':pk': `PIPELINE#${pipeline.id}#IDEMPOTENCY` },
      }),
    );
    expect(keys.Items).toEqual([]);
    // The other pipeline is untouched.
    expect(await shardItems(signalsPartition, other.pipeline.id)).toHaveLength(3);
    expect(await shardItems(executionsPartition, other.pipeline.id)).toHaveLength(2);
  });

  it('removes what the loop keeps of a pipeline: rollouts, approval rules, kept effects, runs’ evaluations; serving answers 404 at once', async () => {
    const { pipeline, runId } = await populatedPipeline(3, 3);
    const startedAt = new Date().toISOString();
    const kept = [
      { ...rolloutKey({ pipelineId: pipeline.id, startedAt, id: 'r-1' }), id: 'r-1', status: 'rolled_back' },
      // Approval rules as versions before the settings table stored them.
      { ...approvalRulesKey(pipeline.id), requireEvaluation: true },
      { ...effectCacheKey(pipeline.id, runId), mark: 'm' },
      { ...evaluationSetKey(runId), cases: [] },
    ];
    await db.send(
      new BatchWriteCommand({
        RequestItems: { [names.Data]: kept.map((Item) => ({ PutRequest: { Item } })) },
      }),
    );
    const rules = { TableName: names.Settings, Key: approvalRulesKey(pipeline.id) };
    await db.send(
      new PutCommand({ TableName: names.Settings, Item: { ...rules.Key, requireEvaluation: true } }),
    );
    const serve = () =>
      call('get-serving-configuration', {
        method: 'GET',
        resource: '/pipelines/{pipelineId}/serving-configuration',
        pathParameters: { pipelineId: pipeline.id },
        principal: admin.principal,
      });
    expect((await serve()).status).toBe(200);

    const response = await deletePipeline(admin, pipeline.id);

    expect((await serve()).status).toBe(404);
    await runDeletionJob(response.body.id);
    expect((await getDeletion(admin, response.body.id)).body).toMatchObject({
      status: 'completed',
      counts: { rollouts: 1, runs: 1, configurations: 1 },
    });
    expect(await partitionItems(pipelinePartition(pipeline.id))).toEqual([]);
    expect(await partitionItems(evaluationPartition(runId))).toEqual([]);
    expect((await db.send(new GetCommand(rules))).Item).toBeUndefined();
  });

  it('keeps exact counts when its environment ends halfway through a step, and resumes', async () => {
    const { pipeline } = await populatedPipeline(1200, 10);
    const response = await deletePipeline(admin, pipeline.id);
    const deletionId = String(response.body.id);
    const tables = { data: names.Data, runs: names.Runs, settings: names.Settings };

    // The environment ends right after a BatchWriteItem of a step: deletes made, counts not yet written.
    let batchWrites = 0;
    const dying = {
      send: (command: unknown) => {
        if (command instanceof BatchWriteCommand && ++batchWrites > 3) {
          return db.send(command).then(() => Promise.reject(new Error('the environment ended here')));
        }
        return db.send(command as BatchWriteCommand);
      },
    } as unknown as DynamoDBDocumentClient;
    const dyingStore = makeDeletionStore(dying, tables);
    await expect(
      (async () => {
        for (;;) await dyingStore.step(deletionId, new Date().toISOString());
      })(),
    ).rejects.toThrow('the environment ended here');
    expect((await shardItems(signalsPartition, pipeline.id)).length).toBeLessThan(1200);

    await runDeletionJob(deletionId);
    expect((await getDeletion(admin, deletionId)).body).toMatchObject({
      status: 'completed',
      counts: { signals: 1200, executions: 10, runs: 1, configurations: 1 },
    });
    expect(await shardItems(signalsPartition, pipeline.id)).toEqual([]);
  });

  it('goes on in re-queued steps when its time runs short', async () => {
    const { pipeline } = await populatedPipeline(600, 0);
    const response = await deletePipeline(admin, pipeline.id);
    // Little time left in every invocation: one step each, then the job queues itself again.
    const deliveries = await runDeletionJob(String(response.body.id), 1_000);
    expect(deliveries).toBeGreaterThan(3);
    expect((await getDeletion(admin, response.body.id)).body).toMatchObject({
      status: 'completed',
      counts: { signals: 600 },
    });
  });
});

describe('exporting a pipeline', () => {
  const exportPage = async (pipelineId: string, caller: Caller = admin, cursor?: string) => {
    const result = await (http['export-pipeline'] as Handler)(
      apiEvent({
        method: 'GET',
        resource: '/pipelines/{pipelineId}/export',
        pathParameters: { pipelineId },
        ...(cursor ? { query: { cursor } } : {}),
        principal: caller.principal,
      }),
      lambdaContext(),
    );
    return result;
  };
  const linesOf = (body: string) =>
    body
      .split('\n')
      .filter((line) => line.length > 0)
      .map((line) => JSON.parse(line) as { type: string; record: Record<string, unknown> });

  it('answers NDJSON with every record as the API shows it, in order, and 404 once deleted', async () => {
    const pipeline = await createPipeline();
    const repository = makePipelineRepository(db, names.Data);
    await repository.recordSignals(
      [signal(pipeline.id, daysAgo(1), 's-1'), signal(pipeline.id, daysAgo(200), 's-old')],
      RETENTION_DAYS.default,
    );
    await repository.recordExecutions(
      [execution(pipeline.id, daysAgo(1), 'e-1')],
      RETENTION_DAYS.default,
      null,
    );

    const page = await exportPage(pipeline.id);
    expect(page.statusCode).toBe(200);
    expect(page.headers?.['content-type']).toMatch(/^application\/x-ndjson/);
    // The headers every other answer has: no content sniffing of the records, HTTPS only.
    expect(page.headers?.['x-content-type-options']).toBe('nosniff');
    expect(page.headers?.['strict-transport-security']).toBe('max-age=31536000; includeSubDomains');
    expect(page.headers?.link).toBeUndefined();
    const lines = linesOf(page.body);
    expect(lines.map((line) => line.type).filter((type) => type !== 'series_hour')).toEqual([
      'pipeline',
      'configuration',
      'signal',
      'execution',
    ]);
    // The hourly series, as counters to add up: yesterday's execution (on its configuration's
    // line) and signal (on the whole pipeline's), not the old signal; every line added, each once.
    const series = lines.filter((line) => line.type === 'series_hour').map((line) => line.record);
    const sum = (lines: typeof series, pick: (record: Record<string, unknown>) => number) =>
      lines.reduce((total, record) => total + pick(record), 0);
    const signalsOf = (record: Record<string, unknown>) =>
      Object.values(record.signals as Record<string, number>).reduce((a, b) => a + b, 0);
    expect(sum(series, (record) => Number(record.executions))).toBe(1);
    expect(sum(series, signalsOf)).toBe(1);
    const ofConfiguration = series.filter((record) => record.configurationId !== undefined);
    expect(ofConfiguration).toHaveLength(1);
    expect(ofConfiguration[0]).toMatchObject({ configurationId: 'c', executions: 1 });
    expect(
      sum(
        series.filter((record) => record.configurationId === undefined),
        signalsOf,
      ),
    ).toBe(1);
    const shown = await call('get-pipeline', {
      method: 'GET',
      resource: '/pipelines/{pipelineId}',
      pathParameters: { pipelineId: pipeline.id },
      principal: admin.principal,
    });
    expect(lines[0]?.record).toEqual(shown.body);
    // Outside the 90-day window: never read again, so never exported.
    expect(lines.map((line) => line.record.id)).not.toContain('s-old');
    expect(lines[2]?.record).not.toHaveProperty('expiresAtEpoch');

    expect((await exportPage(pipeline.id, otherTeam)).statusCode).toBe(403);
    expect((await exportPage(pipeline.id, admin, 'not-a-cursor!')).statusCode).toBe(400);
    await call('delete-pipeline', {
      method: 'DELETE',
      resource: '/pipelines/{pipelineId}',
      pathParameters: { pipelineId: pipeline.id },
      principal: admin.principal,
    });
    expect((await exportPage(pipeline.id)).statusCode).toBe(404);
  });

  it('pages by size with a cursor that neither repeats nor misses a record while new ones are written', async () => {
    const pipeline = await createPipeline();
    const repository = makePipelineRepository(db, names.Data);
    const base = Date.now() - 3_600_000;
    await repository.recordSignals(
      Array.from({ length: 60 }, (_, i) =>
        signal(pipeline.id, new Date(base + i * 1000).toISOString(), `s-${i}`),
      ),
      RETENTION_DAYS.default,
    );
    // Small pages (about 2 KB) so that 60 signals take many.
    const store = makeExportStore(db, { data: names.Data, runs: names.Runs });
    const window = { signalsSince: daysAgo(90), executionsSince: daysAgo(90) };
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await store.page(pipeline.id, cursor, window, 2048);
      expect(Buffer.byteLength(page.body)).toBeLessThanOrEqual(2048);
      seen.push(
        ...linesOf(page.body)
          .filter((line) => line.type !== 'series_hour')
          .map((line) => `${line.type}:${String(line.record.id)}`),
      );
      cursor = page.nextCursor ?? undefined;
      if (pages++ === 2) {
        // Written meanwhile, before and after the page sequence's position.
        await repository.recordSignals(
          [
            signal(pipeline.id, new Date(base - 1000).toISOString(), 'late-early'),
            signal(pipeline.id, new Date(base + 100_000).toISOString(), 'late-after'),
          ],
          RETENTION_DAYS.default,
        );
      }
    } while (cursor);
    expect(pages).toBeGreaterThan(3);
    expect(new Set(seen).size).toBe(seen.length);
    for (let i = 0; i < 60; i++) expect(seen).toContain(`signal:s-${i}`);
    // Written behind the cursor: not in this sequence; written ahead of it: in it.
    expect(seen).not.toContain('signal:late-early');
    expect(seen).toContain('signal:late-after');

    const tampered = Buffer.from(
      JSON.stringify({ part: 3, after: { pk: 'PIPELINE#other#SIGNALS', sk: 'x' } }),
    ).toString('base64url');
    await expect(store.page(pipeline.id, tampered, window, 2048)).rejects.toThrow(/cursor is invalid/);
  });
});

/** The team's events in the outbox (the audit log), newest first. */
async function teamEvents(teamId: string, filter: { pipelineId?: string } = {}) {
  return (await listTeamEvents(db, names.Events, teamId, filter, { limit: 100 })).items;
}
