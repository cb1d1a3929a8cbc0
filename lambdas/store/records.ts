/*
 * A pipeline's signals and executions in the data table: a batch recorded all or none with each id
 * once in its pipeline (markers first, then the records, each with its TTL), and the newest of
 * them from a window's lower bound.
 */
import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { expiryEpoch } from '../core/lifecycle.ts';
import type { Execution, Signal } from '../core/schemas/records.ts';
import { isConditionFailure } from './conditions.ts';
import { executionOldestKey } from './kept-keys.ts';
import {
  executionIdKey,
  executionIndexKey,
  executionKey,
  executionsPartition,
  type ItemKey,
  RECORD_SOURCES,
  recordShard,
  type Shard,
  signalIdKey,
  signalIndexKey,
  signalKey,
  signalsPartition,
} from './keys.ts';
import { claimIds, type NewRecord } from './record-claims.ts';
import { PendingRaced, putAllNew } from './record-puts.ts';
import {
  armOf,
  countsUpdate,
  guardedKinds,
  guardedSignals,
  type MomentRollout,
  markerCounted,
  momentsUpdate,
  pendingDeltas,
  readMarkers,
  signalCounts,
} from './rollout-moments.ts';
import { seriesUpdates } from './series-writes.ts';
import { newestAcross } from './shards.ts';

/** The data table the records are written to and read from. */
export interface RecordTable {
  db: DynamoDBDocumentClient;
  tableName: string;
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

function newExecution(
  execution: Execution,
  retentionDays: number,
  recordedAt: string,
  rollout: CountedRollout | null,
): NewRecord {
  const ttl = expiry(execution.startedAt, retentionDays);
  return {
    id: execution.id,
    item: { ...executionKey(execution), ...executionIndexKey(execution, recordedAt), ...execution, ...ttl },
    // Where it was counted: a signal citing it later counts for that arm and step.
    idMarker: {
      ...executionIdKey(execution.pipelineId, execution.id),
      ...ttl,
      ...markerCounted(execution, rollout),
    },
    recordTime: execution.startedAt,
  };
}

/**
 * Records a batch of signals (the recording time is the server's, taken as the batch is written).
 * During a rollout guarding a signal kind, the values of that kind count for the arm of the
 * execution they cite, in the same transaction (store/rollout-moments.ts).
 */
export async function recordSignals(
  table: RecordTable,
  signals: Signal[],
  retentionDays: number,
  rollout: CountedRollout | null = null,
): Promise<void> {
  const cited = guardedSignals(signals, rollout);
  const first = signals[0];
  const counted = async (): Promise<Transacted | null> => {
    if (!rollout || !first || cited.length === 0) return null;
    const markers = await readMarkers(
      table.db,
      table.tableName,
      first.pipelineId,
      cited.map((s) => s.executionId),
    );
    const expires = expiry(first.occurredAt, retentionDays).expiresAtEpoch;
    const { counted, pending } = signalCounts(
      table.tableName,
      first.pipelineId,
      cited,
      markers,
      rollout,
      expires,
    );
    const update = momentsUpdate(
      table.tableName,
      first.pipelineId,
      rollout.id,
      recordShard(first.id),
      counted,
      null,
    );
    return [...(update ? [update] : []), ...pending];
  };
  // A signal waiting on an execution recorded meanwhile fails its condition: counted again, on its arm.
  for (let attempt = 0; ; attempt++) {
    // The cited executions' markers are read while the signals' ids are claimed (neither waits on the other).
    const counts = counted();
    counts.catch(() => undefined);
    try {
      return await recordAllNew(
        table,
        (recordedAt) => signals.map((signal) => newSignal(signal, retentionDays, recordedAt)),
        'signal',
        retentionDays,
        () => counts,
      );
    } catch (error) {
      if (!(error instanceof PendingRaced) || attempt >= 3)
        throw error instanceof PendingRaced ? error.cause : error;
    }
  }
}

/** The arms of the active rollout whose executions a batch counts (null: no rollout). */
export type CountedRollout = MomentRollout;

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
  const waiting = guardedKinds(rollout).size > 0;
  return recordAllNew(
    table,
    (recordedAt) =>
      executions.map((execution) => newExecution(execution, retentionDays, recordedAt, rollout)),
    'execution',
    retentionDays,
    // Asked after the ids are claimed: a signal citing one of them no longer waits on its marker.
    // Only markers claimed by an update can hold signals that waited: none, nothing is read back.
    async (updated) => {
      const pending = new Map<string, number>();
      const first = executions[0];
      if (rollout && first && updated) {
        const markers = await readMarkers(
          table.db,
          table.tableName,
          first.pipelineId,
          executions.map((e) => e.id),
        );
        for (const execution of executions) {
          const arm = armOf(execution, rollout);
          if (arm) pendingDeltas(markers.get(execution.id), rollout, arm, pending);
        }
      }
      const update = rollout ? countsUpdate(table.tableName, executions, rollout, pending) : null;
      return update ? [update] : null;
    },
    () => keepOldestStart(table, executions),
    waiting,
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

/**
 * Records up to 100 signals or executions, all or none, each id once in its pipeline. A transaction
 * holds at most 100 items, so the ids are claimed first, in a transaction of markers, then the
 * records are put in a second, with what they add to the pipeline's series (store/series.ts). A
 * marker may be written again with the same time, so a batch whose request died between the two
 * writes can be sent again; an id held with another time is a 409, and then the records are never
 * written.
 */
async function recordAllNew(
  table: RecordTable,
  recordsAt: (recordedAt: string) => NewRecord[],
  what: 'signal' | 'execution',
  retentionDays: number,
  counts: Transacted | null | ((updated: boolean) => Promise<Transacted | null>) = null,
  alongside: () => Promise<void> = async () => undefined,
  keepPending = false,
): Promise<void> {
  const series = seriesUpdates(table.tableName, what, retentionDays, Date.now());
  const claimed = recordsAt(new Date().toISOString());
  const updated = await claimIds(table, claimed, what, keepPending);
  const extra = typeof counts === 'function' ? await counts(updated) : counts;
  // Recorded as late as possible: the time between it and the write being visible is what a
  // reader's mark must leave room for (core/rollouts/effect-state.ts SETTLE_MS).
  await Promise.all([
    putAllNew(table, recordsAt(new Date().toISOString()), `${what}s`, extra, series),
    alongside(),
  ]);
}

/** Items written in the last of a batch's transactions: its counts, and signals waiting on a marker. */
type Transacted = Array<Record<string, unknown>>;

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
