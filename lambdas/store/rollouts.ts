/*
 * Rollouts in the data table (keys: store/keys.ts): the transaction items of an approval (an
 * activation or a rollout start), ending a rollout, and the bounded reads of an approval's effect
 * (executions by configuration on gsi2, signals by time). The adapter of RolloutRepository.
 */

import { randomUUID } from 'node:crypto';
import {
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  type QueryCommandInput,
  TransactWriteCommand,
} from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/mini';
import { ConflictError } from '../core/errors.ts';
import type { DomainEvent } from '../core/events.ts';
import type { ApprovalPlan } from '../core/ports/review.ts';
import type { RolloutRepository } from '../core/ports/rollouts.ts';
import type { EffectState, RecordedExecution, RecordedSignal } from '../core/rollouts/effect-state.ts';
import { type Activation, activationSchema } from '../core/schemas/pipelines.ts';
import { executionSchema, signalSchema } from '../core/schemas/records.ts';
import { effectSchema, type Rollout, rolloutSchema } from '../core/schemas/rollouts.ts';

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
const snapshots = new Map<string, { snapshot: string; state: EffectState }>();
const SNAPSHOTS_KEPT = 16;

function remember(key: string, snapshot: { snapshot: string; state: EffectState }) {
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

import {
  contendedTransactionItems,
  failedTransactionItems,
  isConditionFailure,
  putNew,
  refusingTooLarge,
} from './conditions.ts';
import { applyEffectDelta, decodeEffectState, encodeEffectDelta, encodeEffectState } from './effect-state.ts';
import { eventPut } from './events.ts';
import { itemReader } from './items.ts';
import {
  ACTIVATION_PREFIX,
  ACTIVE_ROLLOUTS_PARTITION,
  activeRolloutIndexKey,
  citingSignalsPartition,
  configurationExecutionsPartition,
  effectCacheKey,
  effectStateKey,
  type ItemKey,
  pipelineKey,
  pipelinePartition,
  ROLLOUT_PREFIX,
  rolloutKey,
} from './keys.ts';
import {
  activatePipelineUpdate,
  activationItem,
  configurationItem,
  NO_ACTIVE_ROLLOUT,
  nextConfigurationVersion,
  servingPut,
} from './pipelines.ts';

export function rolloutItem(rollout: Rollout) {
  return { ...rolloutKey(rollout), ...rollout };
}

/**
 * The data-table items of an approval's transaction, the pipeline's update first (its index, 1 in
 * the run store's transaction, names a moved base or a running rollout): an activation, or a
 * rollout start that copies the rollout onto the pipeline item for serving; then the new
 * configuration when the approval made one.
 */
export function approvalDataItems(tableName: string, plan: ApprovalPlan) {
  const configuration = [
    ...(plan.newConfiguration ? [putNew(tableName, configurationItem(plan.newConfiguration))] : []),
    ...(plan.serving ? [servingPut(tableName, plan.serving)] : []),
  ];
  if (plan.rollout) {
    const rollout = plan.rollout;
    return [
      {
        Update: {
          TableName: tableName,
          Key: pipelineKey(rollout.pipelineId),
          UpdateExpression: 'SET #rollout = :rollout, gsi2pk = :gsi2pk, gsi2sk = :gsi2sk',
          ConditionExpression: `activeConfigurationId = :base AND ${NO_ACTIVE_ROLLOUT} AND attribute_not_exists(deletedAt)`,
          ExpressionAttributeNames: { '#rollout': 'rollout' },
          ExpressionAttributeValues: {
            ':rollout': rollout,
            ':base': rollout.baseConfigurationId,
            ':none': null,
            ...prefixed(activeRolloutIndexKey(rollout)),
          },
        },
      },
      putNew(tableName, rolloutItem(rollout)),
      ...configuration,
    ];
  }
  if (!plan.activation) throw new Error('An approval plan needs an activation or a rollout.');
  return [
    activatePipelineUpdate(tableName, plan.activation),
    putNew(tableName, activationItem(plan.activation)),
    ...configuration,
  ];
}

const prefixed = (key: { gsi2pk: string; gsi2sk: string }) => ({
  ':gsi2pk': key.gsi2pk,
  ':gsi2sk': key.gsi2sk,
});

/** The most items one effect arm or signal window reads: Queries stop there whatever the history. */
export const MAX_QUERY_PAGES = 20;

/** DynamoDB adapter of RolloutRepository. */
/** The outbox items of `events`; a repository built without the events table may write none. */
function eventPuts(eventsTable: string | undefined, events: DomainEvent[]) {
  if (events.length === 0) return [];
  if (!eventsTable) throw new Error('The rollout repository was built without the events table.');
  return events.map((event) => eventPut(eventsTable, event));
}

export function makeRolloutRepository(
  db: DynamoDBDocumentClient,
  tableName: string,
  /** The outbox: a rollout's end writes its events there, in the same transaction. */
  eventsTable?: string,
): RolloutRepository {
  const read = {
    rollout: itemReader(rolloutSchema, 'rollout'),
    activation: itemReader(activationSchema, 'activation'),
    effect: itemReader(effectSchema, 'effect'),
    measured: itemReader(measuredExecutionSchema, 'execution'),
    citing: itemReader(citingSignalSchema, 'signal'),
  };

  /** Up to `limit` items of one Query, newest first, following pages (a page holds at most 1 MB). */
  async function newest<T>(
    input: QueryCommandInput,
    limit: number,
    parse: (item: unknown) => T,
  ): Promise<T[]> {
    const items: T[] = [];
    let start: Record<string, unknown> | undefined;
    for (let page = 0; page < MAX_QUERY_PAGES && items.length < limit; page++) {
      const { Items = [], LastEvaluatedKey } = await db.send(
        new QueryCommand({
          ...input,
          ScanIndexForward: false,
          Limit: limit - items.length,
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      items.push(...Items.map(parse));
      if (!LastEvaluatedKey) break;
      start = LastEvaluatedKey;
    }
    return items;
  }

  return {
    nextConfigurationVersion: (pipelineId) => nextConfigurationVersion(db, tableName, pipelineId),

    async latest(pipelineId) {
      const [latest] = await newest(
        {
          TableName: tableName,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
          ExpressionAttributeValues: { ':pk': pipelinePartition(pipelineId), ':prefix': ROLLOUT_PREFIX },
          ConsistentRead: true,
        },
        1,
        read.rollout,
      );
      return latest ?? null;
    },

    async get(key) {
      const { Item } = await db.send(
        new GetCommand({ TableName: tableName, Key: rolloutKey(key), ConsistentRead: true }),
      );
      return Item ? read.rollout(Item) : null;
    },

    async end(rollout, end) {
      const ended: Rollout = {
        ...rollout,
        status: end.status,
        endedAt: end.at,
        endedBy: end.by,
        endReason: end.reason,
      };
      const promote = end.status === 'promoted';
      try {
        await refusingTooLarge(() =>
          db.send(
            new TransactWriteCommand({
              TransactItems: [
                {
                  Update: {
                    TableName: tableName,
                    Key: pipelineKey(rollout.pipelineId),
                    UpdateExpression: `SET #rollout = :none${promote ? ', activeConfigurationId = :candidate' : ''} REMOVE gsi2pk, gsi2sk`,
                    // A pipeline being deleted keeps its rollout as it is: nothing of it is written again.
                    ConditionExpression: `#rollout.#id = :id AND attribute_not_exists(deletedAt)${promote ? ' AND activeConfigurationId = :base' : ''}`,
                    ExpressionAttributeNames: { '#rollout': 'rollout', '#id': 'id' },
                    ExpressionAttributeValues: {
                      ':none': null,
                      ':id': rollout.id,
                      ...(promote
                        ? {
                            ':candidate': rollout.candidateConfigurationId,
                            ':base': rollout.baseConfigurationId,
                          }
                        : {}),
                    },
                  },
                },
                {
                  Update: {
                    TableName: tableName,
                    Key: rolloutKey(rollout),
                    UpdateExpression: 'SET #status = :to, endedAt = :at, endedBy = :by, endReason = :reason',
                    ConditionExpression: '#status = :active',
                    ExpressionAttributeNames: { '#status': 'status' },
                    ExpressionAttributeValues: {
                      ':to': end.status,
                      ':at': end.at,
                      ':by': end.by,
                      ':reason': end.reason,
                      ':active': 'active',
                    },
                  },
                },
                ...(end.activation ? [putNew(tableName, activationItem(end.activation))] : []),
                ...(end.serving ? [servingPut(tableName, end.serving)] : []),
                ...eventPuts(eventsTable, end.events ?? []),
              ],
            }),
          ),
        );
        return ended;
      } catch (error) {
        if (failedTransactionItems(error).length > 0 || contendedTransactionItems(error).length > 0) {
          throw new ConflictError(
            `Rollout ${rollout.id} is no longer active: it was promoted or rolled back meanwhile. Reload it to see how it ended.`,
            { cause: error },
          );
        }
        throw error;
      }
    },

    async listActive(limit) {
      const { Items = [] } = await db.send(
        new QueryCommand({
          TableName: tableName,
          IndexName: 'gsi2',
          KeyConditionExpression: 'gsi2pk = :pk',
          ExpressionAttributeValues: { ':pk': ACTIVE_ROLLOUTS_PARTITION },
          Limit: limit,
        }),
      );
      return Items.flatMap((item) => (item.rollout ? [read.rollout(item.rollout)] : []));
    },

    executionsRecorded(pipelineId, window, limit) {
      // Marks and window bounds are bare times, which no `<recordedAt>#<id>` key equals: BETWEEN is exact.
      const values: Record<string, string> = {
        ':pk': configurationExecutionsPartition(pipelineId, window.configurationId),
        ':after': window.after || RECORDING_FLOOR,
      };
      let range = ' AND gsi2sk > :after';
      if (window.recordedBefore !== undefined) {
        range = ' AND gsi2sk BETWEEN :after AND :before';
        values[':before'] = window.recordedBefore;
      }
      const filters: string[] = [];
      if (window.startedFrom !== undefined) {
        filters.push('startedAt >= :startedFrom');
        values[':startedFrom'] = window.startedFrom;
      }
      if (window.startedBefore !== undefined) {
        filters.push('startedAt < :startedBefore');
        values[':startedBefore'] = window.startedBefore;
      }
      return newest<RecordedExecution>(
        {
          TableName: tableName,
          IndexName: 'gsi2',
          KeyConditionExpression: `gsi2pk = :pk${range}`,
          ...(filters.length > 0 ? { FilterExpression: filters.join(' AND ') } : {}),
          // What the figures need only: an execution's input (up to 16 KB) is never read here.
          ProjectionExpression:
            'gsi2sk, id, pipelineId, configurationId, #status, durationMs, startedAt, slotResults',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: values,
        },
        limit,
        (item) => ({ key: String((item as { gsi2sk: string }).gsi2sk), execution: read.measured(item) }),
      );
    },

    citingSignalsRecorded(pipelineId, after, limit) {
      return newest<RecordedSignal>(
        {
          TableName: tableName,
          IndexName: 'gsi2',
          KeyConditionExpression: 'gsi2pk = :pk AND gsi2sk > :after',
          ProjectionExpression: 'gsi2sk, id, executionId, severity, occurredAt',
          ExpressionAttributeValues: {
            ':pk': citingSignalsPartition(pipelineId),
            ':after': after || RECORDING_FLOOR,
          },
        },
        limit,
        (item) => {
          const signal = read.citing(item);
          return { key: String((item as { gsi2sk: string }).gsi2sk), signal };
        },
      );
    },

    async keptEffect(pipelineId, runId) {
      const key = `${tableName}#${pipelineId}#${runId}`;
      const cached = snapshots.get(key);
      const getItem = (itemKey: ItemKey) =>
        db.send(new GetCommand({ TableName: tableName, Key: itemKey, ConsistentRead: true }));
      // The snapshot is read only when this environment does not hold the one the effect item names.
      const [{ Item }, fetched] = await Promise.all([
        getItem(effectCacheKey(pipelineId, runId)),
        cached ? null : getItem(effectStateKey(pipelineId, runId)),
      ]);
      if (!Item || typeof Item.version !== 'number' || Item.effect === undefined) return null;
      const kept = { effect: read.effect(Item.effect), version: Item.version };
      if (typeof Item.snapshot !== 'string') return { ...kept, state: null };
      let snapshot = cached?.snapshot === Item.snapshot ? cached : null;
      if (!snapshot) {
        const stored = fetched ?? (await getItem(effectStateKey(pipelineId, runId)));
        const state = stored.Item?.snapshot === Item.snapshot ? decodeEffectState(stored.Item?.state) : null;
        if (!state) return { ...kept, state: null };
        snapshot = { snapshot: Item.snapshot, state };
        remember(key, snapshot);
      }
      return { ...kept, state: applyEffectDelta(snapshot.state, Item.delta) };
    },

    async keepEffect(pipelineId, kept, readVersion, expiresAtEpoch) {
      const key = `${tableName}#${pipelineId}#${kept.effect.runId}`;
      const head = {
        ...effectCacheKey(pipelineId, kept.effect.runId),
        effect: kept.effect,
        version: (readVersion ?? 0) + 1,
        expiresAtEpoch,
      };
      const condition =
        readVersion === null
          ? { ConditionExpression: 'attribute_not_exists(pk)' }
          : {
              ConditionExpression: 'version = :version',
              ExpressionAttributeValues: { ':version': readVersion },
            };
      const cached = snapshots.get(key);
      const delta = kept.state && cached ? encodeEffectDelta(kept.state, cached.state) : null;
      const whole = kept.state && delta === null ? encodeEffectState(kept.state) : null;
      try {
        if (delta !== null && cached) {
          // Most measurements: only the small effect item, with the delta since the snapshot.
          await db.send(
            new PutCommand({
              TableName: tableName,
              Item: { ...head, snapshot: cached.snapshot, delta },
              ...condition,
            }),
          );
        } else if (kept.state && whole !== null) {
          // A new snapshot of the whole state, and the effect item naming it, at once.
          const snapshot = randomUUID();
          await db.send(
            new TransactWriteCommand({
              TransactItems: [
                {
                  Put: {
                    TableName: tableName,
                    Item: { ...head, snapshot, delta: encodeEffectDelta(kept.state, kept.state) },
                    ...condition,
                  },
                },
                {
                  Put: {
                    TableName: tableName,
                    Item: {
                      ...effectStateKey(pipelineId, kept.effect.runId),
                      snapshot,
                      state: whole,
                      expiresAtEpoch: expiresAtEpoch + SNAPSHOT_EXTRA_SECONDS,
                    },
                  },
                },
              ],
            }),
          );
          remember(key, { snapshot, state: kept.state });
        } else {
          // No state, or one too large for an item: the answer alone (the next measurement starts afresh).
          await db.send(new PutCommand({ TableName: tableName, Item: head, ...condition }));
        }
        return true;
      } catch (error) {
        if (isConditionFailure(error) || failedTransactionItems(error).length > 0) return false;
        if (contendedTransactionItems(error).length > 0) return false;
        throw error;
      }
    },

    async activationOfRun(pipelineId, activatedAt, runId) {
      const activations = await newest<Activation>(
        {
          TableName: tableName,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
          ExpressionAttributeValues: {
            ':pk': pipelinePartition(pipelineId),
            ':prefix': `${ACTIVATION_PREFIX}${activatedAt}#`,
          },
        },
        10,
        read.activation,
      );
      return activations.find((activation) => activation.synthesisRunId === runId) ?? null;
    },
  };
}
