/*
 * Rollouts in the data table (keys: store/keys.ts): the transaction items of an approval (an
 * activation or a rollout start), ending a rollout, the active rollouts' list and the activation
 * of a run; with the effect's reads and kept state (store/effects.ts), the adapter of
 * RolloutRepository.
 */
import {
  type DynamoDBDocumentClient,
  GetCommand,
  QueryCommand,
  TransactWriteCommand,
} from '@aws-sdk/lib-dynamodb';
import { ConflictError } from '../core/errors.ts';
import type { DomainEvent } from '../core/events.ts';
import type { ApprovalPlan } from '../core/ports/review.ts';
import type { RolloutEnd, RolloutRepository, RolloutStore } from '../core/ports/rollouts.ts';
import { type Activation, activationSchema } from '../core/schemas/pipelines.ts';
import { type Rollout, rolloutSchema } from '../core/schemas/rollouts.ts';
import { contendedTransactionItems, failedTransactionItems, putNew, refusingTooLarge } from './conditions.ts';
import { makeEffectStore } from './effects.ts';
import { eventPut } from './events.ts';
import { itemReader } from './items.ts';
import {
  ACTIVATION_PREFIX,
  ACTIVE_ROLLOUTS_PARTITION,
  activeRolloutIndexKey,
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
  sendContendedAgain,
  servingPut,
  servingVersionBump,
} from './pipeline-writes.ts';
import { queryNewest } from './query-page.ts';
import { stepRollout } from './rollout-steps.ts';

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
    servingPut(tableName, plan.serving),
    servingVersionBump(tableName, plan.serving.teamId),
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

/** The outbox items of `events`; a repository built without the events table may write none. */
function eventPuts(eventsTable: string | undefined, events: DomainEvent[]) {
  if (events.length === 0) return [];
  if (!eventsTable) throw new Error('The rollout repository was built without the events table.');
  return events.map((event) => eventPut(eventsTable, event));
}

/** The client, the tables and the readers the rollouts' functions share. */
interface RolloutTable {
  db: DynamoDBDocumentClient;
  tableName: string;
  /** The outbox: a rollout's end writes its events there, in the same transaction. */
  eventsTable: string | undefined;
  read: { rollout: (item: unknown) => Rollout; activation: (item: unknown) => Activation };
}

/** DynamoDB adapter of RolloutStore: a function that ends rollouts, not one that measures them, needs no more. */
export function makeRolloutStore(
  db: DynamoDBDocumentClient,
  tableName: string,
  /** The outbox: a rollout's end writes its events there, in the same transaction. */
  eventsTable?: string,
): RolloutStore {
  const table: RolloutTable = {
    db,
    tableName,
    eventsTable,
    read: {
      rollout: itemReader(rolloutSchema, 'rollout'),
      activation: itemReader(activationSchema, 'activation'),
    },
  };
  return {
    nextConfigurationVersion: (pipelineId) => nextConfigurationVersion(db, tableName, pipelineId),
    latest: (pipelineId) => latestRollout(table, pipelineId),
    get: (key) => getRollout(table, key),
    end: (rollout, end) => endRollout(table, rollout, end),
    step: (rollout, next) => stepRollout(db, { tableName, eventsTable }, rollout, next),
    listActive: (limit) => listActive(table, limit),
    activationOfRun: (pipelineId, activatedAt, runId) =>
      activationOfRun(table, pipelineId, activatedAt, runId),
  };
}

/** DynamoDB adapter of RolloutRepository: the rollouts and the effect's reads and kept state. */
export function makeRolloutRepository(
  db: DynamoDBDocumentClient,
  tableName: string,
  eventsTable?: string,
): RolloutRepository {
  return { ...makeRolloutStore(db, tableName, eventsTable), ...makeEffectStore(db, tableName) };
}

async function latestRollout(
  { db, tableName, read }: RolloutTable,
  pipelineId: string,
): Promise<Rollout | null> {
  const [latest] = await queryNewest(
    db,
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
}

async function getRollout(
  { db, tableName, read }: RolloutTable,
  key: { pipelineId: string; startedAt: string; id: string },
): Promise<Rollout | null> {
  const { Item } = await db.send(
    new GetCommand({ TableName: tableName, Key: rolloutKey(key), ConsistentRead: true }),
  );
  return Item ? read.rollout(Item) : null;
}

/**
 * Ends the active rollout in one transaction: the pipeline item (its rollout cleared and, promoting,
 * its active configuration moved), the rollout item, the candidate's activation, the serving item
 * and the events.
 */
async function endRollout(
  { db, tableName, eventsTable }: RolloutTable,
  rollout: Rollout,
  end: RolloutEnd,
): Promise<Rollout> {
  try {
    await refusingTooLarge(() =>
      sendContendedAgain(() =>
        db.send(
          new TransactWriteCommand({
            TransactItems: [
              pipelineRolloutEnd(tableName, rollout, end.status === 'promoted'),
              rolloutItemEnd(tableName, rollout, end),
              ...(end.activation ? [putNew(tableName, activationItem(end.activation))] : []),
              servingPut(tableName, end.serving),
              ...eventPuts(eventsTable, end.events),
              servingVersionBump(tableName, end.serving.teamId),
            ],
          }),
        ),
      ),
    );
    return { ...rollout, status: end.status, endedAt: end.at, endedBy: end.by, endReason: end.reason };
  } catch (error) {
    if (failedTransactionItems(error).length > 0 || contendedTransactionItems(error).length > 0) {
      throw new ConflictError(
        `Rollout ${rollout.id} is no longer active: it was promoted or rolled back meanwhile. Reload it to see how it ended.`,
        { cause: error },
      );
    }
    throw error;
  }
}

/** The pipeline item's part of a rollout's end: no rollout (and, promoting, the candidate active). */
function pipelineRolloutEnd(tableName: string, rollout: Rollout, promote: boolean) {
  return {
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
          ? { ':candidate': rollout.candidateConfigurationId, ':base': rollout.baseConfigurationId }
          : {}),
      },
    },
  };
}

/** The rollout item's part of its end: how, when, by whom and why, if it is still active. */
function rolloutItemEnd(tableName: string, rollout: Rollout, end: RolloutEnd) {
  return {
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
  };
}

async function listActive({ db, tableName, read }: RolloutTable, limit: number): Promise<Rollout[]> {
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
}

async function activationOfRun(
  { db, tableName, read }: RolloutTable,
  pipelineId: string,
  activatedAt: string,
  runId: string,
): Promise<Activation | null> {
  const activations = await queryNewest(
    db,
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
}
