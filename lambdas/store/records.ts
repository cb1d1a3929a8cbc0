/*
 * A pipeline's signals and executions in the data table: a batch recorded all or none with each id
 * once in its pipeline (markers first, then the records, each with its TTL), and the newest of
 * them from a window's lower bound.
 */
import {
  type DynamoDBDocumentClient,
  GetCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { ConflictError } from '../core/errors.ts';
import { expiryEpoch } from '../core/lifecycle.ts';
import type { Execution, Signal } from '../core/schemas/records.ts';
import {
  contendedTransactionItems,
  failedTransactionItems,
  isConditionFailure,
  putNew,
  refusingTooLarge,
} from './conditions.ts';
import { executionOldestKey } from './kept-keys.ts';
import {
  executionIdKey,
  executionIndexKey,
  executionKey,
  executionsPartition,
  type ItemKey,
  RECORD_SOURCES,
  recordShard,
  rolloutCountsKey,
  type Shard,
  signalIdKey,
  signalIndexKey,
  signalKey,
  signalsPartition,
} from './keys.ts';
import { newestAcross } from './shards.ts';

/** The data table the records are written to and read from. */
export interface RecordTable {
  db: DynamoDBDocumentClient;
  tableName: string;
}

/** A record to store, with the marker that holds its id in the pipeline and its time. */
interface NewRecord {
  id: string;
  item: Record<string, unknown>;
  idMarker: ItemKey;
  recordTime: string;
}

/** The TTL attribute of a record (and its id marker) kept `retentionDays` after its time. */
function expiry(recordTime: string, retentionDays: number) {
  return { expiresAtEpoch: expiryEpoch(recordTime, retentionDays) };
}

function newSignal(signal: Signal, retentionDays: number, recordedAt: string): NewRecord {
  const ttl = expiry(signal.occurredAt, retentionDays);
  return {
    id: signal.id,
    item: { ...signalKey(signal), ...signalIndexKey(signal, recordedAt), ...signal, ...ttl },
    idMarker: { ...signalIdKey(signal.pipelineId, signal.id), ...ttl },
    recordTime: signal.occurredAt,
  };
}

function newExecution(execution: Execution, retentionDays: number, recordedAt: string): NewRecord {
  const ttl = expiry(execution.startedAt, retentionDays);
  return {
    id: execution.id,
    item: { ...executionKey(execution), ...executionIndexKey(execution, recordedAt), ...execution, ...ttl },
    idMarker: { ...executionIdKey(execution.pipelineId, execution.id), ...ttl },
    recordTime: execution.startedAt,
  };
}

/** Records a batch of signals (the recording time is the server's, taken as the batch is written). */
export function recordSignals(table: RecordTable, signals: Signal[], retentionDays: number): Promise<void> {
  return recordAllNew(
    table,
    (recordedAt) => signals.map((signal) => newSignal(signal, retentionDays, recordedAt)),
    'signal',
  );
}

/** The arms of the active rollout whose executions a batch counts (null: no rollout). */
export interface CountedRollout {
  id: string;
  baseConfigurationId: string;
  candidateConfigurationId: string;
}

/**
 * Records a batch of executions, as recordSignals does (gsi2's order by recording time: the
 * effect's marks), and adds the batch's executions of each arm to the rollout's counts in the same
 * transaction as the records: a batch stored once is counted once.
 */
export function recordExecutions(
  table: RecordTable,
  executions: Execution[],
  retentionDays: number,
  rollout: CountedRollout | null,
): Promise<void> {
  return recordAllNew(
    table,
    (recordedAt) => executions.map((execution) => newExecution(execution, retentionDays, recordedAt)),
    'execution',
    rollout ? countsUpdate(table.tableName, executions, rollout) : null,
    () => keepOldestStart(table, executions),
  );
}

/** Per environment: the oldest start known kept for each pipeline (bounded; forgetting costs one write). */
const knownOldest = new Map<string, string>();
const KNOWN_OLDEST = 10_000;

/**
 * Keeps the oldest start of the pipeline's executions (store/kept-keys.ts executionOldestKey) at
 * most a batch's oldest start. Written once an environment and pipeline (the environment remembers
 * what it wrote or found there), and again only for a batch starting earlier still (sent late), so
 * one key takes a few writes however fast the pipeline records. Sent beside the records'
 * transaction, outside it (a transaction holds 100 items, a full batch fills it): the oldest start
 * only sizes an evaluation set's slices, whose first slice reaches past it (store/evaluations.ts).
 */
async function keepOldestStart({ db, tableName }: RecordTable, executions: Execution[]): Promise<void> {
  const first = executions[0];
  if (!first) return;
  const oldest = executions.reduce(
    (min, { startedAt }) => (startedAt < min ? startedAt : min),
    first.startedAt,
  );
  const known = knownOldest.get(first.pipelineId);
  if (known !== undefined && known <= oldest) return;
  let kept = oldest;
  try {
    await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: executionOldestKey(first.pipelineId),
        UpdateExpression: 'SET oldestStart = :oldest',
        ConditionExpression: 'attribute_not_exists(oldestStart) OR oldestStart > :oldest',
        ExpressionAttributeValues: { ':oldest': oldest },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
  } catch (error) {
    // An earlier start is kept already: remembered, so this environment writes no more.
    if (!isConditionFailure(error)) throw error;
    const stored = (error as { Item?: { oldestStart?: { S?: string } } }).Item?.oldestStart?.S;
    kept = stored !== undefined && stored < oldest ? stored : oldest;
  }
  if (knownOldest.size >= KNOWN_OLDEST) knownOldest.clear();
  knownOldest.set(first.pipelineId, kept);
}

/** One update adding a batch's executions (and failures) of each arm to a shard of the rollout's counts. */
function countsUpdate(tableName: string, executions: Execution[], rollout: CountedRollout) {
  const counts = { base: 0, baseFailed: 0, candidate: 0, candidateFailed: 0 };
  for (const execution of executions) {
    const arm =
      execution.configurationId === rollout.candidateConfigurationId
        ? 'candidate'
        : execution.configurationId === rollout.baseConfigurationId
          ? 'base'
          : null;
    if (arm === null) continue;
    counts[arm] += 1;
    if (execution.status === 'failed') counts[arm === 'base' ? 'baseFailed' : 'candidateFailed'] += 1;
  }
  const first = executions[0];
  if (!first || counts.base + counts.candidate === 0) return null;
  return {
    Update: {
      TableName: tableName,
      Key: rolloutCountsKey(first.pipelineId, rollout.id, recordShard(first.id)),
      UpdateExpression:
        'ADD #base :base, baseFailed :baseFailed, candidate :candidate, candidateFailed :candidateFailed',
      // `base` is a reserved word of DynamoDB's expressions.
      ExpressionAttributeNames: { '#base': 'base' },
      ExpressionAttributeValues: {
        ':base': counts.base,
        ':baseFailed': counts.baseFailed,
        ':candidate': counts.candidate,
        ':candidateFailed': counts.candidateFailed,
      },
    },
  };
}

/**
 * Records up to 100 signals or executions, all or none, each id once in its pipeline. A transaction
 * holds at most 100 items, so the ids are claimed first, in a transaction of markers, then the
 * records are put in a second. A marker may be written again with the same time, so a batch whose
 * request died between the two writes can be sent again; an id held with another time is a 409,
 * and then the records are never written.
 */
async function recordAllNew(
  table: RecordTable,
  recordsAt: (recordedAt: string) => NewRecord[],
  what: 'signal' | 'execution',
  counts: CountsUpdate | null = null,
  alongside: () => Promise<void> = async () => undefined,
): Promise<void> {
  const claimed = recordsAt(new Date().toISOString());
  await claimIds(table, claimed, what);
  // Recorded as late as possible: the time between it and the write being visible is what a
  // reader's mark must leave room for (core/rollouts/effect-state.ts SETTLE_MS).
  await Promise.all([putAllNew(table, recordsAt(new Date().toISOString()), `${what}s`, counts), alongside()]);
}

type CountsUpdate = NonNullable<ReturnType<typeof countsUpdate>>;

async function claimIds(
  { db, tableName }: RecordTable,
  records: NewRecord[],
  what: 'signal' | 'execution',
): Promise<void> {
  try {
    await db.send(
      new TransactWriteCommand({
        TransactItems: records.map(({ idMarker, recordTime }) => ({
          Put: {
            TableName: tableName,
            Item: { ...idMarker, recordTime },
            ConditionExpression: 'attribute_not_exists(pk) OR recordTime = :time',
            ExpressionAttributeValues: { ':time': recordTime },
          },
        })),
      }),
    );
  } catch (error) {
    throw batchConflict(
      error,
      records,
      (ids) =>
        `These ${what} ids are already recorded in this pipeline with another time: ${ids}. ` +
        'An id names one record of a pipeline; nothing in the batch was recorded.',
    );
  }
}

/**
 * What a refused batch transaction means to the client: a ConflictError naming the records whose
 * condition failed (`taken` says how) or that another request was writing at the same moment, or
 * the error itself when it is neither.
 */
function batchConflict(error: unknown, records: NewRecord[], taken: (ids: string) => string): unknown {
  const idsAt = (indexes: number[]) => indexes.map((index) => records[index]?.id).join(', ');
  const failed = failedTransactionItems(error);
  if (failed.length > 0) return new ConflictError(taken(idsAt(failed)), { cause: error });
  const contended = contendedTransactionItems(error);
  if (contended.length > 0) {
    return new ConflictError(
      `Another request is recording these ids at this moment: ${idsAt(contended)}. ` +
        'Nothing in the batch was recorded; send it again.',
      { cause: error },
    );
  }
  return error;
}

/** The most items DynamoDB takes in one transaction. */
const TRANSACTION_ITEMS = 100;

/**
 * Puts up to 100 new records, with the batch's counts, in one transaction: all are written or
 * none. A full batch and its counts do not fit one transaction: its records go in two, the counts
 * with the second, and a batch sent again after only the first was written finds every record
 * of the first already there, goes on with the second, and so is counted once.
 */
async function putAllNew(
  { db, tableName }: RecordTable,
  records: NewRecord[],
  what: string,
  counts: CountsUpdate | null,
): Promise<void> {
  const room = TRANSACTION_ITEMS - (counts ? 1 : 0);
  const parts = records.length <= room ? [records] : [records.slice(0, room / 2), records.slice(room / 2)];
  for (const [index, part] of parts.entries()) {
    const last = index === parts.length - 1;
    const items = [
      ...part.map((record) => putNew(tableName, record.item)),
      ...(last && counts ? [counts] : []),
    ];
    try {
      await refusingTooLarge(() => db.send(new TransactWriteCommand({ TransactItems: items })));
    } catch (error) {
      // Only the first of two parts may be there already (a batch sent again after it was written).
      if (!last && failedTransactionItems(error).length === part.length) {
        continue;
      }
      throw batchConflict(
        error,
        part,
        (ids) => `These ${what} are already recorded: ${ids}. Nothing in the batch was recorded.`,
      );
    }
  }
}

/** The newest `limit` items of a sharded partition from `since` (the window's lower bound) on. */
export function newest<T>(
  { db, tableName }: RecordTable,
  partition: (shard: Shard) => string,
  limit: number,
  parse: (item: unknown) => T,
  since: string,
): Promise<T[]> {
  // The window's lower bound is part of the key condition: older items are never read.
  const queries = RECORD_SOURCES.map((shard) => ({
    base: { TableName: tableName, ExpressionAttributeValues: { ':pk': partition(shard) } },
    partition: 'pk = :pk',
    from: since,
  }));
  // Synthesis evidence: its items count more than its time (docs/scaling.md, "Merged reads").
  return newestAcross(db, queries, 'sk', limit, parse, { frugal: true });
}

/**
 * One record by its id, across the shards: its id marker (in the shard its id names, or the legacy
 * partition) gives its time, and then its item is read directly. null when the id is unknown.
 */
export async function recordById(
  { db, tableName }: RecordTable,
  kind: 'signal' | 'execution',
  pipelineId: string,
  id: string,
): Promise<Record<string, unknown> | null> {
  const markerOf = kind === 'signal' ? signalIdKey : executionIdKey;
  const get = async (Key: ItemKey) => (await db.send(new GetCommand({ TableName: tableName, Key }))).Item;
  for (const legacy of [false, true]) {
    const marker = await get(markerOf(pipelineId, id, legacy));
    if (typeof marker?.recordTime !== 'string') continue;
    const partition = kind === 'signal' ? signalsPartition : executionsPartition;
    return (
      (await get({
        pk: partition(pipelineId, legacy ? null : recordShard(id)),
        sk: `${marker.recordTime}#${id}`,
      })) ?? null
    );
  }
  return null;
}
