/**
 * Data lifecycle on one DynamoDB Local: deleting a pipeline with N signals and N executions (time to
 * the receipt `completed`, items per second against a plain BatchWriteItem loop deleting the same
 * partitions) and exporting M records (records per second against reading the same Query pages
 * directly; the heap kept after each page, after a full collection, to show memory stays flat).
 * N and M default to 100,000; BENCH_LIFECYCLE_RECORDS sets both (a quick run: 10000).
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, type DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { newEvent, SYSTEM_ACTOR } from '../lambdas/core/events.ts';
import { emptyDeletionCounts } from '../lambdas/core/lifecycle.ts';
import { makeRunDeletion } from '../lambdas/core/use-cases/lifecycle.ts';
import { makeExportStore } from '../lambdas/store/export.ts';
import {
  executionIdKey,
  executionIdsPartition,
  executionKey,
  executionsPartition,
  pipelineKey,
  RECORD_SOURCES,
  signalIdKey,
  signalIdsPartition,
  signalKey,
  signalsPartition,
} from '../lambdas/store/keys.ts';
import { makeDeletionStore } from '../lambdas/store/pipeline-deletion.ts';
import { createDocumentClient } from '../lambdas/wiring/aws.ts';
import { createTables, startDynamoDbLocal, type TableNames } from '../local/dynamodb.ts';

export interface LifecycleFigures {
  records: number;
  deletion: { items: number; ms: number; perSecond: number };
  baseline: { items: number; ms: number; perSecond: number };
  deletionRatio: number;
  exported: { records: number; ms: number; perSecond: number; pages: number; retainedMb: number[] };
  directQuery: { records: number; ms: number; perSecond: number };
  exportRatio: number;
}

const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const at = (index: number) => new Date(T0 + index * 1000).toISOString();

/** Puts items with BatchWriteItem, several requests in flight. */
async function putAll(db: DynamoDBDocumentClient, table: string, items: Record<string, unknown>[]) {
  const batches: Record<string, unknown>[][] = [];
  for (let start = 0; start < items.length; start += 25) batches.push(items.slice(start, start + 25));
  let next = 0;
  const worker = async () => {
    while (next < batches.length) {
      let requests = (batches[next++] ?? []).map((Item) => ({ PutRequest: { Item } }));
      while (requests.length > 0) {
        const { UnprocessedItems } = await db.send(
          new BatchWriteCommand({ RequestItems: { [table]: requests } }),
        );
        requests = (UnprocessedItems?.[table] ?? []) as typeof requests;
      }
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
}

/** A pipeline item and `count` signals and executions, with their id markers when `markers`. */
async function fill(
  db: DynamoDBDocumentClient,
  names: TableNames,
  pipelineId: string,
  count: number,
  markers: boolean,
) {
  await putAll(db, names.Data, [
    {
      ...pipelineKey(pipelineId),
      id: pipelineId,
      teamId: 'bench',
      name: 'bench',
      activeConfigurationId: 'c',
      createdAt: at(0),
    },
  ]);
  const chunk = 10_000;
  for (let start = 0; start < count; start += chunk) {
    const items: Record<string, unknown>[] = [];
    for (let index = start; index < Math.min(count, start + chunk); index++) {
      const signal = {
        id: `s${index}`,
        pipelineId,
        kind: 'error',
        severity: 'warning',
        message: `Retrieval failed for request ${index}`,
        occurredAt: at(index),
      };
      const execution = {
        id: `e${index}`,
        pipelineId,
        configurationId: 'c',
        status: 'failed',
        durationMs: 120,
        startedAt: at(index),
      };
      items.push({ ...signalKey(signal), ...signal }, { ...executionKey(execution), ...execution });
      if (markers) {
        items.push(
          { ...signalIdKey(pipelineId, signal.id), recordTime: signal.occurredAt },
          { ...executionIdKey(pipelineId, execution.id), recordTime: execution.startedAt },
        );
      }
    }
    await putAll(db, names.Data, items);
  }
}

/** The baseline: Query a page of keys, BatchWriteItem them away 25 at a time, until each partition is empty. */
async function plainDeleteLoop(
  db: DynamoDBDocumentClient,
  table: string,
  partitions: string[],
): Promise<number> {
  let deleted = 0;
  for (const pk of partitions) {
    for (;;) {
      const { Items = [] } = await db.send(
        new QueryCommand({
          TableName: table,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': pk },
          ProjectionExpression: 'pk, sk',
          Limit: 500,
        }),
      );
      if (Items.length === 0) break;
      for (let start = 0; start < Items.length; start += 25) {
        let requests = Items.slice(start, start + 25).map((Key) => ({ DeleteRequest: { Key } }));
        while (requests.length > 0) {
          const { UnprocessedItems } = await db.send(
            new BatchWriteCommand({ RequestItems: { [table]: requests } }),
          );
          requests = (UnprocessedItems?.[table] ?? []) as typeof requests;
        }
      }
      deleted += Items.length;
    }
  }
  return deleted;
}

const partitionsOf = (pipelineId: string) =>
  RECORD_SOURCES.flatMap((shard) => [
    signalsPartition(pipelineId, shard),
    signalIdsPartition(pipelineId, shard),
    executionsPartition(pipelineId, shard),
    executionIdsPartition(pipelineId, shard),
  ]);

export async function measureLifecycle(records = Number(process.env.BENCH_LIFECYCLE_RECORDS ?? 100_000)) {
  const dynamodb = await startDynamoDbLocal();
  try {
    const client = new DynamoDBClient({
      endpoint: dynamodb.endpoint,
      region: 'local',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    const db = createDocumentClient(client);
    const names = await createTables(client, 'bench-');
    const tables = { data: names.Data, runs: names.Runs, settings: names.Settings, events: names.Events };

    // The baseline first, on a pipeline of the same shape.
    await fill(db, names, 'baseline', records, true);
    let started = performance.now();
    const baselineItems = await plainDeleteLoop(db, names.Data, partitionsOf('baseline'));
    const baselineMs = performance.now() - started;

    await fill(db, names, 'deleted', records, true);
    const deletions = makeDeletionStore(db, tables);
    const receipt = {
      id: 'bench-deletion',
      pipelineId: 'deleted',
      teamId: 'bench',
      status: 'pending' as const,
      requestedAt: new Date().toISOString(),
      requestedBy: 'bench',
      completedAt: null,
      counts: emptyDeletionCounts(),
    };
    started = performance.now();
    await deletions.start(
      receipt,
      newEvent(
        'pipeline.deleted',
        { teamId: 'bench', pipelineId: 'deleted', status: 'pending', actor: SYSTEM_ACTOR },
        { at: receipt.requestedAt, key: receipt.id },
      ),
    );
    const run = makeRunDeletion({ deletions, clock: { now: () => new Date() } });
    const outcome = await run(receipt.id, () => false);
    const deletionMs = performance.now() - started;
    const counts = outcome.receipt ? (await deletions.get(receipt.id))?.counts : undefined;
    if (outcome.outcome !== 'completed' || counts?.signals !== records || counts.executions !== records) {
      throw new Error(`The deletion did not complete with exact counts: ${JSON.stringify(counts)}`);
    }
    const deletionItems = 4 * records;

    // Export M records: M/2 signals and M/2 executions.
    await fill(db, names, 'exported', records / 2, false);
    const window = { signalsSince: '2000-01-01T00:00:00.000Z', executionsSince: '2000-01-01T00:00:00.000Z' };
    const exports = makeExportStore(db, tables);
    let exportedRecords = 0;
    let pages = 0;
    let cursor: string | undefined;
    // What the export keeps after each page (after a full collection): flat when a page is
    // dropped before the next is read. Measured in a pass of its own, so collections cost no time.
    const retainedMb: number[] = [];
    const collect = garbageCollector();
    collect();
    const heapBefore = process.memoryUsage().heapUsed;
    do {
      const page = await exports.page('exported', cursor, window, 5 * 1024 * 1024);
      collect();
      retainedMb.push((process.memoryUsage().heapUsed - heapBefore) / 1024 / 1024);
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    started = performance.now();
    do {
      const page = await exports.page('exported', cursor, window, 5 * 1024 * 1024);
      exportedRecords += page.records;
      pages++;
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    const exportMs = performance.now() - started;

    started = performance.now();
    let directRecords = 0;
    for (const pk of RECORD_SOURCES.flatMap((shard) => [
      signalsPartition('exported', shard),
      executionsPartition('exported', shard),
    ])) {
      let start: Record<string, unknown> | undefined;
      do {
        const page = await db.send(
          new QueryCommand({
            TableName: names.Data,
            KeyConditionExpression: 'pk = :pk',
            ExpressionAttributeValues: { ':pk': pk },
            ExclusiveStartKey: start,
          }),
        );
        directRecords += page.Items?.length ?? 0;
        start = page.LastEvaluatedKey;
      } while (start);
    }
    const directMs = performance.now() - started;

    const perSecond = (count: number, ms: number) => (count / ms) * 1000;
    const figures: LifecycleFigures = {
      records,
      deletion: { items: deletionItems, ms: deletionMs, perSecond: perSecond(deletionItems, deletionMs) },
      baseline: { items: baselineItems, ms: baselineMs, perSecond: perSecond(baselineItems, baselineMs) },
      deletionRatio: perSecond(deletionItems, deletionMs) / perSecond(baselineItems, baselineMs),
      exported: {
        records: exportedRecords,
        ms: exportMs,
        perSecond: perSecond(exportedRecords, exportMs),
        pages,
        retainedMb,
      },
      directQuery: { records: directRecords, ms: directMs, perSecond: perSecond(directRecords, directMs) },
      exportRatio: perSecond(exportedRecords, exportMs) / perSecond(directRecords, directMs),
    };
    return figures;
  } finally {
    await dynamodb.stop();
  }
}

export function formatLifecycle(figures: LifecycleFigures): string {
  const f = (n: number) => n.toFixed(2);
  const ok = (pass: boolean) => (pass ? 'ok' : 'MISSED');
  const { deletion, baseline, exported, directQuery } = figures;
  return [
    `delete a pipeline with ${figures.records} signals + ${figures.records} executions (and their id markers): receipt completed in ${(deletion.ms / 1000).toFixed(1)} s, ${deletion.perSecond.toFixed(0)} items/s vs plain BatchWriteItem loop ${baseline.perSecond.toFixed(0)} items/s: ${f(figures.deletionRatio)}× (target ≥ 0.7×) ${ok(figures.deletionRatio >= 0.7)}`,
    `export ${exported.records} records in ${exported.pages} pages: ${exported.perSecond.toFixed(0)} records/s vs direct Query pages ${directQuery.perSecond.toFixed(0)} records/s: ${f(figures.exportRatio)}× (target ≥ 0.5×) ${ok(figures.exportRatio >= 0.5)}; heap kept after each page (after a full collection, against before the first): ${exported.retainedMb.map((mb) => mb.toFixed(1)).join(', ')} MB (flat: the export holds one page at a time, ≤ 5 MB)`,
  ].join('\n');
}

/** A full garbage collection, exposed at run time (the bench runs without --expose-gc). */
function garbageCollector(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}
