/*
 * What a pipeline's deletion removes, as a table (REMOVALS): each kind of item, where its next
 * bounded batch of keys comes from and which count of the receipt it adds to. The deletion job
 * (store/pipeline-deletion.ts) deletes batch after batch. No Scan: every read is one partition or
 * one index partition.
 */
import { type DynamoDBDocumentClient, QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import type { DeletionCounts } from '../core/lifecycle.ts';
import { effectSnapshotsPartition, executionEndsPartition } from './kept-keys.ts';
import {
  ACTIVATION_PREFIX,
  APPROVAL_RULES_SORT_KEY,
  CONFIGURATION_PREFIX,
  EFFECT_PREFIX,
  evaluationPartition,
  evidencePartition,
  executionIdsPartition,
  executionsPartition,
  pipelineIdempotencyPartition,
  pipelinePartition,
  RECORD_SOURCES,
  ROLLOUT_PREFIX,
  rolloutCountsPartition,
  type Shard,
  signalIdsPartition,
  signalsPartition,
} from './keys.ts';
import { MONITOR_ITEMS_PREFIX } from './monitor-keys.ts';
import { SERIES_PARTITIONS } from './series-keys.ts';
import { TRACE_SHARDS, traceShardPartition } from './trace-keys.ts';

/** Items read, then deleted, per step. */
const STEP_ITEMS = 1000;

export type Key = Record<string, unknown>;

export interface DeletionTables {
  data: string;
  runs: string;
  /** The outbox: starting a deletion writes pipeline.deleted there. */
  events?: string;
  /** The pipeline's approval rules, removed with the pipeline item by the job's end. */
  settings?: string;
}

/** One batch of keys to delete, in the data and the runs table, and where the kind goes on after it. */
export interface RemovalBatch {
  data: Key[];
  runs: Key[];
  /** null: read again from the start (what was deleted is gone), or the kind is done when empty. */
  cursor: string | null;
  /** The kind has nothing after this batch (an index read once in order, never read again). */
  last?: boolean;
  /**
   * The batch is a partition's first items up to `lastSk`: the intent then holds this range, not
   * every key, and a step that resumes it deletes what is left of the range.
   */
  range?: { pk: string; prefix?: string; lastSk: string };
}

/** A batch as the receipt keeps it while it is deleted: its range instead of its keys when it has one. */
export type Intent = RemovalBatch & { count: number };

/**
 * One kind of item a pipeline's deletion removes: where its next batch comes from and which
 * count of the receipt it adds to (null: removed but not counted, e.g. id markers).
 */
export interface RemovalKind {
  name: string;
  counts: keyof DeletionCounts | null;
  /** The table whose deleted keys are counted. */
  countedTable?: 'data' | 'runs';
  next(
    context: { db: DynamoDBDocumentClient; tables: DeletionTables },
    pipelineId: string,
    cursor: string | null,
  ): Promise<RemovalBatch>;
}

/** The next keys of one data-table partition (optionally of one sort-key prefix), from its start. */
function partitionRemoval(
  name: string,
  counts: keyof DeletionCounts | null,
  partitionOf: (pipelineId: string) => string,
  prefix?: string,
): RemovalKind {
  return {
    name,
    counts,
    async next({ db, tables }, pipelineId) {
      const { Items = [] } = await db.send(
        new QueryCommand({
          TableName: tables.data,
          KeyConditionExpression: prefix ? 'pk = :pk AND begins_with(sk, :prefix)' : 'pk = :pk',
          ExpressionAttributeValues: {
            ':pk': partitionOf(pipelineId),
            ...(prefix ? { ':prefix': prefix } : {}),
          },
          ProjectionExpression: 'pk, sk',
          // Strongly consistent: an item this deletion already removed is never read (or counted) again.
          ConsistentRead: true,
          Limit: STEP_ITEMS,
        }),
      );
      const pk = partitionOf(pipelineId);
      const lastSk = Items.at(-1)?.sk;
      return {
        data: Items.map((item) => ({ pk: item.pk, sk: item.sk })),
        runs: [],
        cursor: null,
        ...(typeof lastSk === 'string' ? { range: { pk, lastSk, ...(prefix ? { prefix } : {}) } } : {}),
      };
    },
  };
}

/**
 * The next keys of a sharded partition: its sources (the legacy partition, then each shard) one
 * after the other, the cursor naming the source to read from (what was deleted is gone).
 */
function shardedRemoval(
  name: string,
  counts: keyof DeletionCounts | null,
  partitionOf: (pipelineId: string, shard: Shard) => string,
): RemovalKind {
  return removalAcross(
    name,
    counts,
    RECORD_SOURCES.map((shard) => (pipelineId: string) => partitionOf(pipelineId, shard)),
  );
}

/** A kind kept in several partitions of the pipeline's (shards, a series' grains), removed one after another. */
function removalAcross(
  name: string,
  counts: keyof DeletionCounts | null,
  partitions: ReadonlyArray<(pipelineId: string) => string>,
): RemovalKind {
  const sources = partitions.map((partitionOf) => partitionRemoval(name, counts, partitionOf));
  return {
    name,
    counts,
    async next(context, pipelineId, cursor) {
      for (let index = Number(cursor ?? 0) || 0; index < sources.length; index++) {
        const batch = await (sources[index] as RemovalKind).next(context, pipelineId, null);
        if (batch.data.length > 0) return { ...batch, cursor: String(index) };
      }
      return { data: [], runs: [], cursor: null };
    },
  };
}

/** The keys still in a batch's range (a resumed step's deletes; the counted ones are the intent's). */
export async function keysInRange(
  db: DynamoDBDocumentClient,
  table: string,
  range: NonNullable<RemovalBatch['range']>,
) {
  const keys: Key[] = [];
  let start: Key | undefined;
  do {
    const page = await db.send(
      new QueryCommand({
        TableName: table,
        KeyConditionExpression: range.prefix
          ? 'pk = :pk AND sk BETWEEN :prefix AND :last'
          : 'pk = :pk AND sk <= :last',
        ExpressionAttributeValues: {
          ':pk': range.pk,
          ':last': range.lastSk,
          ...(range.prefix ? { ':prefix': range.prefix } : {}),
        },
        ProjectionExpression: 'pk, sk',
        ConsistentRead: true,
        ExclusiveStartKey: start,
      }),
    );
    keys.push(...(page.Items ?? []).map((item) => ({ pk: item.pk, sk: item.sk })));
    start = page.LastEvaluatedKey;
  } while (start);
  return keys;
}

/** What the receipt keeps of a batch while it is being deleted, and the count it will add. */
export function intentOf(batch: RemovalBatch, countedTable: 'data' | 'runs' | undefined): Intent {
  const count = countedTable === 'runs' ? batch.runs.length : batch.data.length;
  return batch.range ? { ...batch, data: [], count } : { ...batch, count };
}

/** A Query page from `cursor` on: an index is read in order once (its reads may lag the deletes). */
async function pageFrom(db: DynamoDBDocumentClient, input: QueryCommandInput, cursor: string | null) {
  const { Items = [], LastEvaluatedKey } = await db.send(
    new QueryCommand({
      ...input,
      ...(cursor === null ? {} : { ExclusiveStartKey: JSON.parse(cursor) as Key }),
    }),
  );
  return {
    items: Items,
    cursor: LastEvaluatedKey ? JSON.stringify(LastEvaluatedKey) : null,
    last: !LastEvaluatedKey,
  };
}

/** Every key of one data-table partition (a run's evidence or evaluation: a few hundred at most). */
async function partitionKeys(db: DynamoDBDocumentClient, table: string, partition: string): Promise<Key[]> {
  const keys: Key[] = [];
  let start: Key | undefined;
  do {
    const found = await db.send(
      new QueryCommand({
        TableName: table,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': partition },
        ProjectionExpression: 'pk, sk',
        ExclusiveStartKey: start,
      }),
    );
    keys.push(...(found.Items ?? []).map((item) => ({ pk: item.pk, sk: item.sk })));
    start = found.LastEvaluatedKey;
  } while (start);
  return keys;
}

/** The runs (by the runs table's byPipeline index) and, with each, the evidence and evaluation it kept. */
const runsRemoval: RemovalKind = {
  name: 'runs',
  counts: 'runs',
  countedTable: 'runs',
  async next({ db, tables }, pipelineId, cursor) {
    const page = await pageFrom(
      db,
      {
        TableName: tables.runs,
        IndexName: 'byPipeline',
        KeyConditionExpression: 'pipelineId = :id',
        ExpressionAttributeValues: { ':id': pipelineId },
        ProjectionExpression: 'id',
        // A run keeps up to a few hundred evidence items: a few runs keep the intent well under 400 KB.
        Limit: 5,
      },
      cursor,
    );
    const evidence: Key[] = [];
    // Each run's evidence copies and its evaluation (the chosen cases and the runners' results).
    const partitions = page.items.flatMap((run) => [
      evidencePartition(String(run.id)),
      evaluationPartition(String(run.id)),
    ]);
    for (const partition of partitions) evidence.push(...(await partitionKeys(db, tables.data, partition)));
    return {
      data: evidence,
      runs: page.items.map((run) => ({ id: run.id })),
      cursor: page.cursor,
      last: page.last,
    };
  },
};

/** The pipeline's idempotency keys, by the gsi1 partition they are written into. */
const idempotencyRemoval: RemovalKind = {
  name: 'idempotency keys',
  counts: null,
  async next({ db, tables }, pipelineId, cursor) {
    const page = await pageFrom(
      db,
      {
        TableName: tables.data,
        IndexName: 'gsi1',
        KeyConditionExpression: 'gsi1pk = :pk',
        ExpressionAttributeValues: { ':pk': pipelineIdempotencyPartition(pipelineId) },
        ProjectionExpression: 'pk, sk',
        Limit: STEP_ITEMS,
      },
      cursor,
    );
    return {
      data: page.items.map((item) => ({ pk: item.pk, sk: item.sk })),
      runs: [],
      cursor: page.cursor,
      last: page.last,
    };
  },
};

/**
 * What a pipeline's deletion removes, in this order; the pipeline item itself goes last, with the
 * receipt's completion. Another feature's items are one more entry (a partitionRemoval of their
 * partition, or a RemovalKind of their own), e.g. rollouts counting into `rollouts`.
 */
export const REMOVALS: readonly RemovalKind[] = [
  runsRemoval,
  /* @__PURE__ */ shardedRemoval('signals', 'signals', signalsPartition),
  /* @__PURE__ */ shardedRemoval('signal ids', null, signalIdsPartition),
  /* @__PURE__ */ shardedRemoval('executions', 'executions', executionsPartition),
  /* @__PURE__ */ shardedRemoval('execution ids', null, executionIdsPartition),
  /* @__PURE__ */ shardedRemoval('rollout counts', null, rolloutCountsPartition),
  /* @__PURE__ */ shardedRemoval('effect snapshots', null, effectSnapshotsPartition),
  /* @__PURE__ */ shardedRemoval('execution ends', null, executionEndsPartition),
  /* @__PURE__ */ partitionRemoval('activations', 'activations', pipelinePartition, ACTIVATION_PREFIX),
  /* @__PURE__ */ partitionRemoval(
    'configurations',
    'configurations',
    pipelinePartition,
    CONFIGURATION_PREFIX,
  ),
  // Where versions before the settings table kept them (the settings table's item goes at the end).
  /* @__PURE__ */ partitionRemoval('approval rules', null, pipelinePartition, APPROVAL_RULES_SORT_KEY),
  /* @__PURE__ */ partitionRemoval('rollouts', 'rollouts', pipelinePartition, ROLLOUT_PREFIX),
  /* @__PURE__ */ partitionRemoval('kept effects', null, pipelinePartition, EFFECT_PREFIX),
  // Its monitors and their count (the judge skips a deleted pipeline's monitors until then).
  /* @__PURE__ */ partitionRemoval('monitors', null, pipelinePartition, MONITOR_ITEMS_PREFIX),
  idempotencyRemoval,
  /* @__PURE__ */ removalAcross('series', null, SERIES_PARTITIONS),
  // OTLP spans staged under their traces, one partition per trace shard.
  ...Array.from({ length: TRACE_SHARDS }, (_, shard) =>
    partitionRemoval('staged spans', null, (pipelineId) => traceShardPartition(pipelineId, shard)),
  ),
];
