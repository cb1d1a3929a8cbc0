/*
 * Deleting a pipeline: the receipt, the mark that hides the pipeline from every reader at once,
 * and the job's bounded, resumable steps over a table of what to remove (REMOVALS). Each step
 * writes what it is about to delete (its intent) into the receipt, deletes it with BatchWriteItem,
 * then adds it to the counts: a step that dies halfway is finished by the next one from its
 * intent, so the counts are exact. No Scan: every read is one partition or one index partition.
 */
import {
  type DynamoDBDocumentClient,
  GetCommand,
  QueryCommand,
  type QueryCommandInput,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/mini';
import { ConflictError } from '../core/errors.ts';
import {
  type DeletionCounts,
  type DeletionReceipt,
  type DeletionStore,
  deletionReceiptSchema,
} from '../core/lifecycle.ts';
import { deleteKeys } from './batch-delete.ts';
import { failedTransactionItems, isConditionFailure, putNew } from './conditions.ts';
import { eventPut } from './events.ts';
import { parseItem } from './items.ts';
import {
  ACTIVATION_PREFIX,
  APPROVAL_RULES_SORT_KEY,
  approvalRulesKey,
  CONFIGURATION_PREFIX,
  deletionKey,
  EFFECT_PREFIX,
  evaluationPartition,
  evidencePartition,
  executionIdsPartition,
  executionsPartition,
  PENDING_DELETIONS_PARTITION,
  pendingDeletionIndexKey,
  pipelineIdempotencyPartition,
  pipelineKey,
  pipelinePartition,
  ROLLOUT_PREFIX,
  servingKey,
  signalIdsPartition,
  signalsPartition,
} from './keys.ts';

/** Items read, then deleted, per step. */
const STEP_ITEMS = 1000;

type Key = Record<string, unknown>;

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
type Intent = RemovalBatch & { count: number };

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

/** The keys still in a batch's range (a resumed step's deletes; the counted ones are the intent's). */
async function keysInRange(
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
function intentOf(batch: RemovalBatch, countedTable: 'data' | 'runs' | undefined): Intent {
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
    for (const partition of partitions) {
      let start: Key | undefined;
      do {
        const found = await db.send(
          new QueryCommand({
            TableName: tables.data,
            KeyConditionExpression: 'pk = :pk',
            ExpressionAttributeValues: { ':pk': partition },
            ProjectionExpression: 'pk, sk',
            ExclusiveStartKey: start,
          }),
        );
        evidence.push(...(found.Items ?? []).map((item) => ({ pk: item.pk, sk: item.sk })));
        start = found.LastEvaluatedKey;
      } while (start);
    }
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
  /* @__PURE__ */ partitionRemoval('signals', 'signals', signalsPartition),
  /* @__PURE__ */ partitionRemoval('signal ids', null, signalIdsPartition),
  /* @__PURE__ */ partitionRemoval('executions', 'executions', executionsPartition),
  /* @__PURE__ */ partitionRemoval('execution ids', null, executionIdsPartition),
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
  idempotencyRemoval,
];

/** The receipt's job state: the kind being removed, its cursor, and the batch being deleted. */
interface Progress {
  kind: number;
  cursor: string | null;
  intent: Intent | null;
}

/** Where the job goes on once `batch` of kind `kind` is deleted and counted. */
function afterBatch(kind: number, batch: RemovalBatch): Progress {
  return batch.last
    ? { kind: kind + 1, cursor: null, intent: null }
    : { kind, cursor: batch.cursor, intent: null };
}

/** DynamoDB adapter of DeletionStore; `removals` is REMOVALS unless a test gives another table. */
export function makeDeletionStore(
  db: DynamoDBDocumentClient,
  tables: DeletionTables,
  removals: readonly RemovalKind[] = REMOVALS,
): DeletionStore {
  const receiptOf = (item: unknown) => parseItem(deletionReceiptSchema, item, 'deletion receipt');
  const keySchema = z.record(z.string(), z.unknown());
  const stateSchema = z.object({
    seq: z.number(),
    progress: z.object({
      kind: z.number(),
      cursor: z.nullable(z.string()),
      intent: z.nullable(
        z.object({
          data: z.array(keySchema),
          runs: z.array(keySchema),
          cursor: z.nullable(z.string()),
          last: z.optional(z.boolean()),
          range: z.optional(z.object({ pk: z.string(), prefix: z.optional(z.string()), lastSk: z.string() })),
          count: z.number(),
        }),
      ),
    }),
  });

  /** Moves the job on, on the condition that no other step moved it since `seq`; false if one did. */
  async function advance(
    deletionId: string,
    seq: number,
    progress: Progress,
    add?: { count: keyof DeletionCounts; by: number },
  ): Promise<boolean> {
    try {
      await db.send(
        new UpdateCommand({
          TableName: tables.data,
          Key: deletionKey(deletionId),
          UpdateExpression: `SET progress = :progress, seq = :next${add ? ', counts.#count = counts.#count + :by' : ''}`,
          ConditionExpression: 'seq = :seq',
          ...(add ? { ExpressionAttributeNames: { '#count': add.count } } : {}),
          ExpressionAttributeValues: {
            ':progress': progress,
            ':next': seq + 1,
            ':seq': seq,
            ...(add ? { ':by': add.by } : {}),
          },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  async function complete(receipt: DeletionReceipt, seq: number, at: string): Promise<boolean> {
    if (!tables.settings) throw new Error('The deletion job was built without the settings table.');
    try {
      await db.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: tables.data,
                Key: deletionKey(receipt.id),
                UpdateExpression:
                  'SET #status = :completed, completedAt = :at, seq = :next REMOVE progress, gsi1pk, gsi1sk',
                ConditionExpression: 'seq = :seq',
                ExpressionAttributeNames: { '#status': 'status' },
                ExpressionAttributeValues: {
                  ':completed': 'completed',
                  ':at': at,
                  ':seq': seq,
                  ':next': seq + 1,
                },
              },
            },
            { Delete: { TableName: tables.data, Key: pipelineKey(receipt.pipelineId) } },
            { Delete: { TableName: tables.settings, Key: approvalRulesKey(receipt.pipelineId) } },
          ],
        }),
      );
      return true;
    } catch (error) {
      if (failedTransactionItems(error).length > 0) return false;
      throw error;
    }
  }

  async function load(deletionId: string) {
    const { Item } = await db.send(
      new GetCommand({ TableName: tables.data, Key: deletionKey(deletionId), ConsistentRead: true }),
    );
    return Item;
  }

  return {
    async start(receipt, event) {
      if (event && !tables.events) throw new Error('The deletion store was built without the events table.');
      try {
        await db.send(
          new TransactWriteCommand({
            TransactItems: [
              {
                Update: {
                  TableName: tables.data,
                  Key: pipelineKey(receipt.pipelineId),
                  // Out of the team's list, off the active rollouts' index and hidden from every read
                  // at once; removed by the job's end.
                  UpdateExpression:
                    'SET deletedAt = :at, deletionId = :id REMOVE gsi1pk, gsi1sk, gsi2pk, gsi2sk',
                  ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(deletedAt)',
                  ExpressionAttributeValues: { ':at': receipt.requestedAt, ':id': receipt.id },
                },
              },
              // Serving answers 404 from this moment: its one GetItem finds nothing.
              { Delete: { TableName: tables.data, Key: servingKey(receipt.pipelineId) } },
              putNew(tables.data, {
                ...deletionKey(receipt.id),
                ...pendingDeletionIndexKey(receipt),
                ...receipt,
                seq: 0,
                progress: { kind: 0, cursor: null, intent: null } satisfies Progress,
              }),
              ...(event && tables.events ? [eventPut(tables.events, event)] : []),
            ],
          }),
        );
      } catch (error) {
        if (failedTransactionItems(error).includes(0)) {
          throw new ConflictError(`Pipeline ${receipt.pipelineId} is already being deleted.`, {
            cause: error,
          });
        }
        throw error;
      }
    },

    async pendingSince(before, limit) {
      const { Items = [] } = await db.send(
        new QueryCommand({
          TableName: tables.data,
          IndexName: 'gsi1',
          KeyConditionExpression: 'gsi1pk = :pk AND gsi1sk < :before',
          ExpressionAttributeValues: { ':pk': PENDING_DELETIONS_PARTITION, ':before': before },
          ProjectionExpression: 'id',
          Limit: limit,
        }),
      );
      return Items.map((item) => String(item.id));
    },

    async get(deletionId) {
      const item = await load(deletionId);
      return item ? receiptOf(item) : null;
    },

    async step(deletionId, at) {
      const item = await load(deletionId);
      if (!item) return { done: true, receipt: null };
      const receipt = receiptOf(item);
      if (receipt.status === 'completed') return { done: true, receipt };
      const { seq, progress } = parseItem(stateSchema, item, 'deletion progress');
      const kind = removals[progress.kind];
      const context = { db, tables };
      if (progress.intent) {
        // A batch being deleted (perhaps by a step that died): delete it (again) and count it once.
        const { intent } = progress;
        const data = intent.range ? await keysInRange(db, tables.data, intent.range) : intent.data;
        await deleteKeys(db, tables.data, data);
        await deleteKeys(db, tables.runs, intent.runs);
        await advance(
          deletionId,
          seq,
          afterBatch(progress.kind, intent),
          kind?.counts ? { count: kind.counts, by: intent.count } : undefined,
        );
        return { done: false, receipt };
      }
      if (!kind) {
        const completed = await complete(receipt, seq, at);
        return {
          done: completed,
          receipt: completed ? { ...receipt, status: 'completed', completedAt: at } : receipt,
        };
      }
      const batch = await kind.next(context, receipt.pipelineId, progress.cursor);
      if (batch.data.length === 0 && batch.runs.length === 0) {
        const next =
          batch.cursor === null
            ? { kind: progress.kind + 1, cursor: null }
            : { kind: progress.kind, cursor: batch.cursor };
        await advance(deletionId, seq, { ...next, intent: null });
        return { done: false, receipt };
      }
      // The intent first: from here on, this batch is deleted and counted exactly once.
      const intent = intentOf(batch, kind.countedTable);
      if (!(await advance(deletionId, seq, { ...progress, intent }))) return { done: false, receipt };
      await deleteKeys(db, tables.data, batch.data);
      await deleteKeys(db, tables.runs, batch.runs);
      await advance(
        deletionId,
        seq + 1,
        afterBatch(progress.kind, batch),
        kind.counts ? { count: kind.counts, by: intent.count } : undefined,
      );
      return { done: false, receipt };
    },
  };
}
