/**
 * Items read by synthesis evidence, an evaluation set and an export of one pipeline (2,000 executions
 * and 2,000 signals over a minute) across the shards, against the same records in one unsharded
 * partition read as before the shards: one Query with the answer's Limit (evidence), two ends and
 * ten slices of 100 (evaluation set), pages of 200 (export). DynamoDB Local, every Query's
 * ScannedCount and every BatchGetItem's items counted by a middleware on the client.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { nanoid } from 'nanoid';
import type { Execution, Signal } from '../lambdas/core/schemas/records.ts';
import { makeEvaluationStore } from '../lambdas/store/evaluations.ts';
import { makeExportStore } from '../lambdas/store/export.ts';
import { isEmptyRange } from '../lambdas/store/key-ranges.ts';
import { executionsPartition, signalsPartition } from '../lambdas/store/keys.ts';
import { makePipelineRepository } from '../lambdas/store/pipelines.ts';
import { SERIES_RECORDING } from '../lambdas/store/series-writes.ts';
import { createTables, startDynamoDbLocal } from '../local/dynamodb.ts';

const RECORDS = 2_000;
const EVIDENCE = 200;
const SINCE = '2000-01-01T00:00:00.000Z';
const WINDOW = { signalsSince: SINCE, executionsSince: SINCE };

export interface ItemsRead {
  read: string;
  unsharded: number;
  sharded: number;
}

function records(pipelineId: string) {
  const start = Date.now() - 120_000;
  // One a 30 ms: 2,000 of each over a minute.
  const at = (index: number) => new Date(start + index * 30).toISOString();
  const executions: Execution[] = Array.from({ length: RECORDS }, (_, index) => ({
    id: nanoid(),
    pipelineId,
    configurationId: 'c1',
    status: index % 10 === 0 ? 'failed' : 'succeeded',
    durationMs: 100,
    startedAt: at(index),
  }));
  const signals: Signal[] = Array.from({ length: RECORDS }, (_, index) => ({
    id: nanoid(),
    pipelineId,
    kind: 'timeout',
    severity: 'warning',
    message: `timed out ${index}`,
    occurredAt: at(index),
  }));
  return { executions, signals };
}

/** The same records under the keys before the shards (one partition each), BatchWriteItem. */
async function writeUnsharded(db: DynamoDBDocumentClient, table: string, pipelineId: string) {
  const { executions, signals } = records(pipelineId);
  const items = [
    ...executions.map((e) => ({
      pk: executionsPartition(pipelineId, null),
      sk: `${e.startedAt}#${e.id}`,
      ...e,
    })),
    ...signals.map((s) => ({ pk: signalsPartition(pipelineId, null), sk: `${s.occurredAt}#${s.id}`, ...s })),
  ];
  for (let at = 0; at < items.length; at += 25) {
    const RequestItems = { [table]: items.slice(at, at + 25).map((Item) => ({ PutRequest: { Item } })) };
    await db.send(new BatchWriteCommand({ RequestItems }));
  }
}

/** What the reads before the shards made: one partition's Queries (main's store), counted by `count`. */
async function unshardedReads(db: DynamoDBDocumentClient, table: string, pipelineId: string) {
  const query = async (
    pk: string,
    range: string,
    values: Record<string, string>,
    limit: number,
    newest: boolean,
  ) =>
    (
      await db.send(
        new QueryCommand({
          TableName: table,
          KeyConditionExpression: `pk = :pk AND ${range}`,
          ExpressionAttributeValues: { ':pk': pk, ...values },
          ScanIndexForward: !newest,
          Limit: limit,
        }),
      )
    ).Items ?? [];
  const evidence = async (pk: string) => query(pk, 'sk >= :since', { ':since': SINCE }, EVIDENCE, true);
  const executions = executionsPartition(pipelineId, null);
  const evaluation = async () => {
    const [oldest, newest] = await Promise.all(
      [false, true].map(async (last) =>
        String((await query(executions, 'sk >= :since', { ':since': SINCE }, 1, last))[0]?.sk),
      ),
    );
    const start = Date.parse(String(oldest).split('#')[0] ?? '');
    const width = (Date.parse(String(newest).split('#')[0] ?? '') - start) / 10;
    await Promise.all(
      Array.from({ length: 10 }, (_, index) => {
        const from = index === 0 ? (oldest as string) : new Date(start + index * width).toISOString();
        const to = index === 9 ? (newest as string) : new Date(start + (index + 1) * width).toISOString();
        if (isEmptyRange(from, to)) return [];
        return query(executions, 'sk BETWEEN :from AND :to', { ':from': from, ':to': to }, 100, true);
      }),
    );
  };
  const exportAll = async () => {
    for (const pk of [signalsPartition(pipelineId, null), executions]) {
      let start: Record<string, unknown> | undefined;
      do {
        const page = await db.send(
          new QueryCommand({
            TableName: table,
            KeyConditionExpression: 'pk = :pk',
            ExpressionAttributeValues: { ':pk': pk },
            Limit: 200,
            ...(start ? { ExclusiveStartKey: start } : {}),
          }),
        );
        start = page.LastEvaluatedKey;
      } while (start);
    }
  };
  return {
    evidenceSignals: () => evidence(signalsPartition(pipelineId, null)),
    evidenceExecutions: () => evidence(executions),
    evaluation,
    exportAll,
  };
}

export async function measureItemsRead(): Promise<ItemsRead[]> {
  const dynamodb = await startDynamoDbLocal();
  const client = new DynamoDBClient({
    endpoint: dynamodb.endpoint,
    region: 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  let itemsRead = 0;
  client.middlewareStack.add(
    (next) => async (args) => {
      const result = await next(args);
      const output = result.output as {
        ScannedCount?: number;
        Responses?: Record<string, unknown[]>;
        Item?: unknown;
      };
      if (typeof output.ScannedCount === 'number') itemsRead += output.ScannedCount;
      // A GetItem's and a BatchGetItem's items count too (the evaluation set's kept oldest start).
      if (output.Item !== undefined) itemsRead += 1;
      for (const items of Object.values(output.Responses ?? {})) itemsRead += items.length;
      return result;
    },
    { step: 'initialize', name: 'countItemsRead' },
  );
  const db = DynamoDBDocumentClient.from(client);
  try {
    const names = await createTables(client, 'items-read-');
    const counted = async (read: () => Promise<unknown>) => {
      itemsRead = 0;
      await read();
      return itemsRead;
    };
    const unshardedId = `p-${nanoid()}`;
    await writeUnsharded(db, names.Data, unshardedId);
    const before = await unshardedReads(db, names.Data, unshardedId);
    const shardedId = `p-${nanoid()}`;
    const pipelines = makePipelineRepository(db, names.Data, names.Events);
    const { executions, signals } = records(shardedId);
    // The records alone, as the unsharded ones were written: an export also carries the series'
    // hourly counters, which the records of before the shards had none of.
    SERIES_RECORDING.on = false;
    try {
      for (let at = 0; at < RECORDS; at += 100) {
        await pipelines.recordExecutions(executions.slice(at, at + 100), 90, null);
        await pipelines.recordSignals(signals.slice(at, at + 100), 90);
      }
    } finally {
      SERIES_RECORDING.on = true;
    }
    const evaluations = makeEvaluationStore(db, { runs: names.Runs, data: names.Data });
    const exports = makeExportStore(db, { data: names.Data, runs: names.Runs });
    const exportAll = async () => {
      let cursor: string | undefined;
      do {
        cursor = (await exports.page(shardedId, cursor, WINDOW, 5_000_000)).nextCursor ?? undefined;
      } while (cursor);
    };
    return [
      {
        read: `synthesis evidence, newest ${EVIDENCE} signals`,
        unsharded: await counted(before.evidenceSignals),
        sharded: await counted(() => pipelines.recentSignals(shardedId, EVIDENCE, SINCE)),
      },
      {
        read: `synthesis evidence, newest ${EVIDENCE} executions`,
        unsharded: await counted(before.evidenceExecutions),
        sharded: await counted(() => pipelines.recentExecutions(shardedId, EVIDENCE, SINCE)),
      },
      {
        read: 'evaluation set (two ends, 10 slices of 100)',
        unsharded: await counted(before.evaluation),
        sharded: await counted(() => evaluations.sampleExecutions(shardedId, SINCE)),
      },
      {
        read: `export, every page (${(2 * RECORDS).toLocaleString('en-US')} records)`,
        unsharded: await counted(before.exportAll),
        sharded: await counted(exportAll),
      },
    ];
  } finally {
    client.destroy();
    await dynamodb.stop();
  }
}

export function formatItemsRead(rows: ItemsRead[]): string {
  return [
    'items read, sharded vs the same records in one partition read as before the shards (target: no more):',
    ...rows.map(
      (row) =>
        `  ${row.read}: ${row.sharded} vs ${row.unsharded} (${(row.sharded / row.unsharded).toFixed(3)}×) ${row.sharded <= row.unsharded ? 'ok' : 'MISSED'}`,
    ),
  ].join('\n');
}
