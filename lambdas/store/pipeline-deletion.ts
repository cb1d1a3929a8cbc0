/*
 * Deleting a pipeline: the receipt, the mark that hides the pipeline from every reader at once,
 * and the job's bounded, resumable steps over the table of what to remove (store/removals.ts).
 * Each step writes what it is about to delete (its intent) into the receipt, deletes it with
 * BatchWriteItem, then adds it to the counts: a step that dies halfway is finished by the next one
 * from its intent, so the counts are exact.
 */
import {
  type DynamoDBDocumentClient,
  GetCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/mini';
import { ConflictError } from '../core/errors.ts';
import type { DomainEvent } from '../core/events.ts';
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
  approvalRulesKey,
  deletionKey,
  PENDING_DELETIONS_PARTITION,
  pendingDeletionIndexKey,
  pipelineKey,
  servingKey,
} from './keys.ts';
import { sendContendedAgain, servingVersionBump } from './pipeline-writes.ts';
import {
  type DeletionTables,
  type Intent,
  intentOf,
  keysInRange,
  REMOVALS,
  type RemovalBatch,
  type RemovalKind,
} from './removals.ts';

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

/** The receipt's job state as stored: its sequence number (each move is conditioned on it) and progress. */
function jobStateSchema() {
  const keySchema = z.record(z.string(), z.unknown());
  return z.object({
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
}

/** What the deletion's functions share: the client, the tables, what to remove and the readers. */
interface Deletions {
  db: DynamoDBDocumentClient;
  tables: DeletionTables;
  removals: readonly RemovalKind[];
  readReceipt: (item: unknown) => DeletionReceipt;
  readState: (item: unknown) => { seq: number; progress: Progress };
}

/**
 * The request's side of DeletionStore: starting a deletion and reading its receipt, for the
 * functions that answer DELETE /pipelines/{pipelineId} and GET /deletions/{id} (their bundles hold
 * nothing of the job).
 */
export function makeDeletionRequests(
  db: DynamoDBDocumentClient,
  tables: Pick<DeletionTables, 'data' | 'events'>,
): Pick<DeletionStore, 'start' | 'get'> {
  const readReceipt = (item: unknown) => parseItem(deletionReceiptSchema, item, 'deletion receipt');
  return {
    start: (receipt, event) => startDeletion({ db, tables }, receipt, event),
    get: async (deletionId) => {
      const item = await load({ db, tables }, deletionId);
      return item ? readReceipt(item) : null;
    },
  };
}

/** DynamoDB adapter of DeletionStore; `removals` is REMOVALS unless a test gives another table. */
export function makeDeletionStore(
  db: DynamoDBDocumentClient,
  tables: DeletionTables,
  removals: readonly RemovalKind[] = REMOVALS,
): DeletionStore {
  const stateSchema = jobStateSchema();
  const deletions: Deletions = {
    db,
    tables,
    removals,
    readReceipt: (item) => parseItem(deletionReceiptSchema, item, 'deletion receipt'),
    readState: (item) => parseItem(stateSchema, item, 'deletion progress'),
  };
  return {
    ...makeDeletionRequests(db, tables),
    pendingSince: (before, limit) => pendingSince(deletions, before, limit),
    step: (deletionId, at) => step(deletions, deletionId, at),
  };
}

/** Hides the pipeline (its item marked, its serving item gone) and stores the pending receipt with its event. */
async function startDeletion(
  { db, tables }: { db: DynamoDBDocumentClient; tables: Pick<DeletionTables, 'data' | 'events'> },
  receipt: DeletionReceipt,
  event: DomainEvent,
): Promise<void> {
  const eventsTable = tables.events;
  if (!eventsTable) throw new Error('The deletion store was built without the events table.');
  try {
    await sendContendedAgain(() =>
      db.send(
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
            servingVersionBump(tables.data, receipt.teamId),
            putNew(tables.data, {
              ...deletionKey(receipt.id),
              ...pendingDeletionIndexKey(receipt),
              ...receipt,
              seq: 0,
              progress: { kind: 0, cursor: null, intent: null } satisfies Progress,
            }),
            eventPut(eventsTable, event),
          ],
        }),
      ),
    );
  } catch (error) {
    if (failedTransactionItems(error).includes(0)) {
      throw new ConflictError(`Pipeline ${receipt.pipelineId} is already being deleted.`, { cause: error });
    }
    throw error;
  }
}

async function pendingSince({ db, tables }: Deletions, before: string, limit: number): Promise<string[]> {
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
}

async function load(
  { db, tables }: { db: DynamoDBDocumentClient; tables: Pick<DeletionTables, 'data'> },
  deletionId: string,
) {
  const { Item } = await db.send(
    new GetCommand({ TableName: tables.data, Key: deletionKey(deletionId), ConsistentRead: true }),
  );
  return Item;
}

/**
 * One step of the job: finishes a batch left by a step that died (its intent), or removes the next
 * batch of the current kind, or, when every kind is done, completes the receipt.
 */
async function step(
  deletions: Deletions,
  deletionId: string,
  at: string,
): Promise<{ done: boolean; receipt: DeletionReceipt | null }> {
  const item = await load(deletions, deletionId);
  if (!item) return { done: true, receipt: null };
  const receipt = deletions.readReceipt(item);
  if (receipt.status === 'completed') return { done: true, receipt };
  const { seq, progress } = deletions.readState(item);
  const kind = deletions.removals[progress.kind];
  if (progress.intent) {
    await finishIntent(deletions, deletionId, seq, progress, progress.intent);
    return { done: false, receipt };
  }
  if (!kind) {
    const completed = await complete(deletions, receipt, seq, at);
    return {
      done: completed,
      receipt: completed ? { ...receipt, status: 'completed', completedAt: at } : receipt,
    };
  }
  await removeNextBatch(deletions, { deletionId, pipelineId: receipt.pipelineId }, seq, progress, kind);
  return { done: false, receipt };
}

/** A batch being deleted (perhaps by a step that died): deletes it (again) and counts it once. */
async function finishIntent(
  deletions: Deletions,
  deletionId: string,
  seq: number,
  progress: Progress,
  intent: Intent,
): Promise<void> {
  const { db, tables } = deletions;
  const kind = deletions.removals[progress.kind];
  const data = intent.range ? await keysInRange(db, tables.data, intent.range) : intent.data;
  await deleteKeys(db, tables.data, data);
  await deleteKeys(db, tables.runs, intent.runs);
  await advance(
    deletions,
    deletionId,
    seq,
    afterBatch(progress.kind, intent),
    kind?.counts ? { count: kind.counts, by: intent.count } : undefined,
  );
}

/** Reads the kind's next batch, writes it as the intent, deletes it and counts it. */
async function removeNextBatch(
  deletions: Deletions,
  { deletionId, pipelineId }: { deletionId: string; pipelineId: string },
  seq: number,
  progress: Progress,
  kind: RemovalKind,
): Promise<void> {
  const { db, tables } = deletions;
  const batch: RemovalBatch = await kind.next({ db, tables }, pipelineId, progress.cursor);
  if (batch.data.length === 0 && batch.runs.length === 0) {
    const next =
      batch.cursor === null
        ? { kind: progress.kind + 1, cursor: null }
        : { kind: progress.kind, cursor: batch.cursor };
    await advance(deletions, deletionId, seq, { ...next, intent: null });
    return;
  }
  // The intent first: from here on, this batch is deleted and counted exactly once.
  const intent = intentOf(batch, kind.countedTable);
  if (!(await advance(deletions, deletionId, seq, { ...progress, intent }))) return;
  await deleteKeys(db, tables.data, batch.data);
  await deleteKeys(db, tables.runs, batch.runs);
  await advance(
    deletions,
    deletionId,
    seq + 1,
    afterBatch(progress.kind, batch),
    kind.counts ? { count: kind.counts, by: intent.count } : undefined,
  );
}

/** Moves the job on, on the condition that no other step moved it since `seq`; false if one did. */
async function advance(
  { db, tables }: Deletions,
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

/** Completes the receipt and removes the pipeline item and its approval rules, at once. */
async function complete({ db, tables }: Deletions, receipt: DeletionReceipt, seq: number, at: string) {
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
