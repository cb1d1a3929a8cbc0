/*
 * An approval's effect in the data table (keys: store/keys.ts): the bounded reads that measure it
 * (executions by configuration and citing signals by recording time, on gsi2) and the kept effect
 * (a small item with the delta since a snapshot of the whole state). Part of the RolloutRepository
 * adapter (store/rollouts.ts).
 */

import { randomUUID } from 'node:crypto';
import {
  BatchGetCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  TransactWriteCommand,
} from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/mini';
import type { EffectStore, KeptEffect } from '../core/ports/rollouts.ts';
import type {
  ArmWindow,
  EffectState,
  RecordedExecution,
  RecordedSignal,
} from '../core/rollouts/effect-state.ts';
import { executionSchema, signalSchema } from '../core/schemas/records.ts';
import { effectSchema } from '../core/schemas/rollouts.ts';
import { storable } from '../core/schemas/storable.ts';
import { contendedTransactionItems, failedTransactionItems, isConditionFailure } from './conditions.ts';
import { applyEffectDelta, decodeEffectState, encodeEffectDelta, encodeEffectState } from './effect-state.ts';
import { itemReader } from './items.ts';
import { effectSnapshotKey } from './kept-keys.ts';
import { isEmptyRange } from './key-ranges.ts';
import {
  citingSignalsPartition,
  configurationExecutionsPartition,
  effectCacheKey,
  effectStateKey,
  type ItemKey,
  RECORD_SHARDS,
  RECORD_SOURCES,
  recordShard,
  rolloutCountsKey,
} from './keys.ts';
import { judgementHistory, keepJudgementHistory } from './rollout-steps.ts';
import { newestAcross } from './shards.ts';

/** What the effect reads of an execution (projected), and of a signal citing one. */
const measuredExecutionSchema = /* @__PURE__ */ z.pick(executionSchema, {
  id: true,
  status: true,
  durationMs: true,
  startedAt: true,
  slotResults: true,
});
// In a function marked pure: a shape read in the arguments would keep it (and signalSchema) in every bundle.
const citingSignalSchema = /* @__PURE__ */ (() =>
  z.object({
    ...z.pick(signalSchema, { id: true, severity: true, occurredAt: true }).shape,
    executionId: z.string(),
  }))();

/**
 * The effect snapshots this execution environment last read or wrote, by table, pipeline and run
 * (a warm Lambda's next measurement then reads only the small effect item). A few, newest kept.
 */
const snapshots = new Map<string, RememberedSnapshot>();
const SNAPSHOTS_KEPT = 16;

/** A snapshot's name, its shard (null: kept where versions before kept it) and its state. */
interface RememberedSnapshot {
  snapshot: string;
  shard: number | null;
  state: EffectState;
}

function remember(key: string, snapshot: RememberedSnapshot) {
  snapshots.delete(key);
  snapshots.set(key, snapshot);
  while (snapshots.size > SNAPSHOTS_KEPT) {
    const oldest = snapshots.keys().next().value;
    if (oldest === undefined) break;
    snapshots.delete(oldest);
  }
}

/** A snapshot outlives its effect item's TTL by this much (the effect item names it). */
const SNAPSHOT_EXTRA_SECONDS = 3_600;

/** Below every recording key (DynamoDB refuses an empty string in a key condition). */
const RECORDING_FLOOR = '0';

/** The client, the data table and the readers the effect's functions share. */
interface EffectTable {
  db: DynamoDBDocumentClient;
  tableName: string;
  read: ReturnType<typeof effectReaders>;
}

function effectReaders() {
  return {
    effect: itemReader(effectSchema, 'effect'),
    measured: itemReader(measuredExecutionSchema, 'execution'),
    citing: itemReader(citingSignalSchema, 'signal'),
  };
}

/** The effect's part of the RolloutRepository adapter. */
export function makeEffectStore(db: DynamoDBDocumentClient, tableName: string): EffectStore {
  const table: EffectTable = { db, tableName, read: effectReaders() };
  return {
    executionsRecorded: (pipelineId, window, limit) => executionsRecorded(table, pipelineId, window, limit),
    citingSignalsRecorded: (pipelineId, after, limit) =>
      citingSignalsRecorded(table, pipelineId, after, limit),
    rolloutCounts: (pipelineId, rolloutId) => rolloutCounts(table, pipelineId, rolloutId),
    judgementHistory: (pipelineId, rolloutId) => judgementHistory(db, tableName, pipelineId, rolloutId),
    keepJudgementHistory: (pipelineId, rolloutId, points) =>
      keepJudgementHistory(db, tableName, pipelineId, rolloutId, points),
    keptEffect: (pipelineId, runId) => keptEffect(table, pipelineId, runId),
    keepEffect: (pipelineId, kept, readVersion, expiresAtEpoch) =>
      keepEffect(table, pipelineId, kept, readVersion, expiresAtEpoch),
  };
}

function executionsRecorded(
  { db, tableName, read }: EffectTable,
  pipelineId: string,
  window: ArmWindow & { after: string },
  limit: number,
): Promise<RecordedExecution[]> {
  // Marks and window bounds are bare times, which no `<recordedAt>#<id>` key equals: BETWEEN is exact.
  const after = window.after || RECORDING_FLOOR;
  // A closed window whose lower bound moved past its end (a retention floor later than the
  // rollout's end) holds nothing.
  if (window.recordedBefore !== undefined && isEmptyRange(after, window.recordedBefore)) {
    return Promise.resolve([]);
  }
  const values: Record<string, string> = {};
  const filters: string[] = [];
  if (window.startedFrom !== undefined) {
    filters.push('startedAt >= :startedFrom');
    values[':startedFrom'] = window.startedFrom;
  }
  if (window.startedBefore !== undefined) {
    filters.push('startedAt < :startedBefore');
    values[':startedBefore'] = window.startedBefore;
  }
  const queries = RECORD_SOURCES.map((shard) => ({
    base: {
      TableName: tableName,
      IndexName: 'gsi2',
      ...(filters.length > 0 ? { FilterExpression: filters.join(' AND ') } : {}),
      // What the figures need only: an execution's input (up to 16 KB) is never read here.
      ProjectionExpression:
        'gsi2sk, id, pipelineId, configurationId, #status, durationMs, startedAt, slotResults',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ...values,
        ':pk': configurationExecutionsPartition(pipelineId, window.configurationId, shard),
      },
    },
    partition: 'gsi2pk = :pk',
    after,
    ...(window.recordedBefore !== undefined ? { to: window.recordedBefore } : {}),
  }));
  return newestAcross<RecordedExecution>(db, queries, 'gsi2sk', limit, (item) => ({
    key: String(item.gsi2sk),
    execution: read.measured(item),
  }));
}

function citingSignalsRecorded(
  { db, tableName, read }: EffectTable,
  pipelineId: string,
  after: string,
  limit: number,
): Promise<RecordedSignal[]> {
  const queries = RECORD_SOURCES.map((shard) => ({
    base: {
      TableName: tableName,
      IndexName: 'gsi2',
      ProjectionExpression: 'gsi2sk, id, executionId, severity, occurredAt',
      ExpressionAttributeValues: { ':pk': citingSignalsPartition(pipelineId, shard) },
    },
    partition: 'gsi2pk = :pk',
    after: after || RECORDING_FLOOR,
  }));
  return newestAcross<RecordedSignal>(db, queries, 'gsi2sk', limit, (item) => ({
    key: String(item.gsi2sk),
    signal: read.citing(item),
  }));
}

/** The sum of a rollout's counter shards: one BatchGetItem (store/keys.ts rolloutCountsKey). */
async function rolloutCounts({ db, tableName }: EffectTable, pipelineId: string, rolloutId: string) {
  const counts = {
    base: { executions: 0, failed: 0 },
    candidate: { executions: 0, failed: 0 },
    // The guarded metrics' counters by name (core/rollouts/counters.ts), summed over the shards.
    counters: {} as Record<string, number>,
  };
  let keys: Array<Record<string, unknown>> = Array.from({ length: RECORD_SHARDS }, (_, shard) => ({
    ...rolloutCountsKey(pipelineId, rolloutId, shard),
  }));
  for (let round = 0; keys.length > 0; round++) {
    if (round >= 5) throw new Error('DynamoDB left rollout counts unread; try again later.');
    const { Responses, UnprocessedKeys } = await db.send(
      new BatchGetCommand({ RequestItems: { [tableName]: { Keys: keys, ConsistentRead: true } } }),
    );
    for (const item of Responses?.[tableName] ?? []) {
      counts.base.executions += Number(item.base ?? 0);
      counts.base.failed += Number(item.baseFailed ?? 0);
      counts.candidate.executions += Number(item.candidate ?? 0);
      counts.candidate.failed += Number(item.candidateFailed ?? 0);
      for (const [name, value] of Object.entries(item)) {
        if (/^\d/.test(name)) counts.counters[name] = (counts.counters[name] ?? 0) + Number(value);
      }
    }
    keys = (UnprocessedKeys?.[tableName]?.Keys ?? []) as typeof keys;
  }
  return counts;
}

async function keptEffect(
  { db, tableName, read }: EffectTable,
  pipelineId: string,
  runId: string,
): Promise<KeptEffect | null> {
  const key = `${tableName}#${pipelineId}#${runId}`;
  const cached = snapshots.get(key);
  const getItem = (itemKey: ItemKey) =>
    db.send(new GetCommand({ TableName: tableName, Key: itemKey, ConsistentRead: true }));
  const { Item } = await getItem(effectCacheKey(pipelineId, runId));
  if (!Item || typeof Item.version !== 'number' || Item.effect === undefined) return null;
  const kept = { effect: read.effect(Item.effect), version: Item.version };
  if (typeof Item.snapshot !== 'string') return { ...kept, state: null };
  // The snapshot is read only when this environment does not hold the one the effect item names.
  let snapshot = cached?.snapshot === Item.snapshot ? cached : null;
  if (!snapshot) {
    // In the shard the effect item names; without one, where versions before kept it.
    const shard = typeof Item.snapshotShard === 'number' ? Item.snapshotShard : null;
    const stored = await getItem(
      shard === null ? effectStateKey(pipelineId, runId) : effectSnapshotKey(pipelineId, runId, shard),
    );
    const state =
      stored.Item?.snapshot === Item.snapshot
        ? decodeEffectState(stored.Item?.packed ?? stored.Item?.state)
        : null;
    if (!state) return { ...kept, state: null };
    snapshot = { snapshot: Item.snapshot, shard, state };
    remember(key, snapshot);
  }
  return { ...kept, state: applyEffectDelta(snapshot.state, Item.delta) };
}

/** The effect item's content and the condition on the version read, for every way of keeping it. */
interface KeptHead {
  item: Record<string, unknown>;
  condition: { ConditionExpression: string; ExpressionAttributeValues?: Record<string, unknown> };
}

async function keepEffect(
  table: EffectTable,
  pipelineId: string,
  kept: Omit<KeptEffect, 'version'>,
  readVersion: number | null,
  expiresAtEpoch: number,
): Promise<boolean> {
  const key = `${table.tableName}#${pipelineId}#${kept.effect.runId}`;
  const head: KeptHead = {
    item: {
      ...effectCacheKey(pipelineId, kept.effect.runId),
      // A p-value of 1e-200 (thousands an arm, clearly apart) is kept as 0: DynamoDB stores no less than 1e-130.
      effect: storable(kept.effect),
      version: (readVersion ?? 0) + 1,
      expiresAtEpoch,
    },
    condition:
      readVersion === null
        ? { ConditionExpression: 'attribute_not_exists(pk)' }
        : {
            ConditionExpression: 'version = :version',
            ExpressionAttributeValues: { ':version': readVersion },
          },
  };
  const cached = snapshots.get(key);
  const delta = kept.state && cached ? encodeEffectDelta(kept.state, cached.state) : null;
  const whole = kept.state && delta === null ? encodeEffectState(kept.state) : null;
  try {
    if (delta !== null && cached) {
      // Most measurements: only the small effect item, with the delta since the snapshot.
      const shard = cached.shard === null ? {} : { snapshotShard: cached.shard };
      await putHead(table, head, { snapshot: cached.snapshot, ...shard, delta });
    } else if (kept.state && whole !== null) {
      const snapshot = await putSnapshot(table, head, {
        pipelineId,
        runId: kept.effect.runId,
        state: kept.state,
        whole,
        expiresAtEpoch,
      });
      remember(key, { ...snapshot, state: kept.state });
    } else {
      // No state, or one too large for an item: the answer alone (the next measurement starts afresh).
      await putHead(table, head, {});
    }
    return true;
  } catch (error) {
    if (isConditionFailure(error) || failedTransactionItems(error).length > 0) return false;
    if (contendedTransactionItems(error).length > 0) return false;
    throw error;
  }
}

/** The effect item alone, with what it says of the state (the snapshot it names and the delta since). */
async function putHead({ db, tableName }: EffectTable, head: KeptHead, state: Record<string, unknown>) {
  await db.send(
    new PutCommand({ TableName: tableName, Item: { ...head.item, ...state }, ...head.condition }),
  );
}

/**
 * A new snapshot of the whole state and the effect item naming it, at once; answers the snapshot's
 * name. The snapshot goes to the shard its random name hashes to (store/kept-keys.ts effectSnapshotKey).
 */
async function putSnapshot(
  { db, tableName }: EffectTable,
  head: KeptHead,
  {
    pipelineId,
    runId,
    state,
    whole,
    expiresAtEpoch,
  }: { pipelineId: string; runId: string; state: EffectState; whole: Uint8Array; expiresAtEpoch: number },
): Promise<{ snapshot: string; shard: number }> {
  const snapshot = randomUUID();
  const snapshotShard = recordShard(snapshot);
  await db.send(
    new TransactWriteCommand({
      TransactItems: [
        {
          Put: {
            TableName: tableName,
            Item: { ...head.item, snapshot, snapshotShard, delta: encodeEffectDelta(state, state) },
            ...head.condition,
          },
        },
        {
          Put: {
            TableName: tableName,
            Item: {
              ...effectSnapshotKey(pipelineId, runId, snapshotShard),
              snapshot,
              packed: whole,
              expiresAtEpoch: expiresAtEpoch + SNAPSHOT_EXTRA_SECONDS,
            },
          },
        },
      ],
    }),
  );
  return { snapshot, shard: snapshotShard };
}
