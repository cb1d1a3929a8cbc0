/*
 * Pipelines, their configurations and activations, and the signals and executions recorded
 * against them, in the data table (keys: store/keys.ts): the DynamoDB adapter of PipelineRepository.
 */
import {
  type DynamoDBDocumentClient,
  GetCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { ConflictError, NotFoundError } from '../core/errors.ts';
import type { DomainEvent } from '../core/events.ts';
import { expiryEpoch, RETENTION_DAYS } from '../core/lifecycle.ts';
import type { PageRequest } from '../core/ports/common.ts';
import type { PipelineRepository } from '../core/ports/pipelines.ts';
import {
  type Activation,
  activationSchema,
  type Configuration,
  configurationSchema,
  type Pipeline,
  pipelineSchema,
  type ServingState,
  servingStateSchema,
} from '../core/schemas/pipelines.ts';
import { type Execution, executionSchema, type Signal, signalSchema } from '../core/schemas/records.ts';
import {
  contendedTransactionItems,
  failedTransactionItems,
  isConditionFailure,
  putNew,
  refusingTooLarge,
} from './conditions.ts';
import { eventPut } from './events.ts';
import { itemReader } from './items.ts';
import {
  ACTIVATION_PREFIX,
  activationKey,
  configurationKey,
  executionIdKey,
  executionIndexKey,
  executionKey,
  executionsPartition,
  type ItemKey,
  KEY_ATTRIBUTES,
  pipelineIndexKey,
  pipelineKey,
  pipelinePartition,
  servingKey,
  signalIdKey,
  signalIndexKey,
  signalKey,
  signalsPartition,
  teamPipelinesPartition,
} from './keys.ts';
import { queryPage } from './query-page.ts';

export function configurationItem(configuration: Configuration) {
  return { ...configurationKey(configuration.pipelineId, configuration.id), ...configuration };
}

export function activationItem(activation: Activation) {
  return { ...activationKey(activation), ...activation };
}

/**
 * The transaction item that rewrites the serving item: the state as one JSON string (`state`), the
 * read model of the customer's hot path, read whole and never queried by attribute, so DynamoDB
 * and the SDK handle one string instead of two nested configurations. A state too large for one
 * item (two configurations near their size limit) is stored without it: serving then reads them.
 */
export function servingPut(tableName: string, serving: ServingState) {
  const state = JSON.stringify(serving);
  const whole = state.length <= SERVING_ITEM_BYTES;
  return {
    Put: {
      TableName: tableName,
      Item: {
        ...servingKey(serving.pipelineId),
        pipelineId: serving.pipelineId,
        ...(whole ? { state } : { oversized: true }),
      },
    },
  };
}

/** Above this, a serving state is not kept whole (an item holds 400 KB). */
const SERVING_ITEM_BYTES = 300_000;

/** The condition (with `#rollout` and `:none`) that the pipeline item has no active rollout. */
export const NO_ACTIVE_ROLLOUT = '(attribute_not_exists(#rollout) OR #rollout = :none)';

/** The transaction item that moves a pipeline's active configuration, guarded by what it was. */
export function activatePipelineUpdate(tableName: string, activation: Activation) {
  return {
    Update: {
      TableName: tableName,
      Key: pipelineKey(activation.pipelineId),
      UpdateExpression: 'SET activeConfigurationId = :next',
      // No rollout may be running: its base would no longer be what the other arm serves.
      ConditionExpression: `activeConfigurationId = :previous AND ${NO_ACTIVE_ROLLOUT} AND attribute_not_exists(deletedAt)`,
      ExpressionAttributeNames: { '#rollout': 'rollout' },
      ExpressionAttributeValues: {
        ':next': activation.configurationId,
        ':previous': activation.previousConfigurationId,
        ':none': null,
      },
    },
  };
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

/** A pipeline item as the API shows it: `rollout` is null when none is active. */
function readPipeline(item: unknown): Pipeline {
  const pipeline = itemReader(pipelineSchema, 'pipeline')(item);
  return { ...pipeline, rollout: pipeline.rollout ?? null };
}

/** The items' readers; built by the factory, like the schemas' other users do. */
function pipelineReaders() {
  return {
    pipeline: readPipeline,
    configuration: itemReader(configurationSchema, 'configuration'),
    activation: itemReader(activationSchema, 'activation'),
    signal: itemReader(signalSchema, 'signal'),
    execution: itemReader(executionSchema, 'execution'),
  };
}

/** What the repository's functions share: the client, the data table and the readers. */
interface PipelineTable {
  db: DynamoDBDocumentClient;
  tableName: string;
  /** The events table, for the changes that write an event (activations). */
  eventsTable: string | undefined;
  read: ReturnType<typeof pipelineReaders>;
}

/** DynamoDB adapter of PipelineRepository. */
export function makePipelineRepository(
  db: DynamoDBDocumentClient,
  tableName: string,
  eventsTable?: string,
): PipelineRepository {
  const table: PipelineTable = { db, tableName, eventsTable, read: pipelineReaders() };
  const { read } = table;
  return {
    createPipeline: (pipeline, configuration) => createPipeline(table, pipeline, configuration),
    getPipeline: (id) => getPipeline(table, id),
    listPipelines: (teamId, page) => listPipelines(table, teamId, page),
    getConfiguration: (pipelineId, configurationId) => getConfiguration(table, pipelineId, configurationId),
    // The recording time is the server's, taken as the batch is written (gsi2's order: the effect's marks).
    recordSignals: (signals, retentionDays = RETENTION_DAYS.default) =>
      recordAllNew(
        table,
        (recordedAt) => signals.map((signal) => newSignal(signal, retentionDays, recordedAt)),
        'signal',
      ),
    recordExecutions: (executions, retentionDays = RETENTION_DAYS.default) =>
      recordAllNew(
        table,
        (recordedAt) => executions.map((execution) => newExecution(execution, retentionDays, recordedAt)),
        'execution',
      ),
    activateConfiguration: (activation, event, serving) =>
      activateConfiguration(table, activation, event, serving),
    getServingState: (pipelineId) => getServingState(table, pipelineId),
    listActivations: (pipelineId, page) => listActivations(table, pipelineId, page),
    recentSignals: (pipelineId, limit, since) =>
      newest(table, signalsPartition(pipelineId), limit, read.signal, since),
    recentExecutions: (pipelineId, limit, since) =>
      newest(table, executionsPartition(pipelineId), limit, read.execution, since),
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
  table: PipelineTable,
  recordsAt: (recordedAt: string) => NewRecord[],
  what: 'signal' | 'execution',
): Promise<void> {
  const claimed = recordsAt(new Date().toISOString());
  await claimIds(table, claimed, what);
  // Recorded as late as possible: the time between it and the write being visible is what a
  // reader's mark must leave room for (core/rollouts/effect-state.ts SETTLE_MS).
  await putAllNew(table, recordsAt(new Date().toISOString()), `${what}s`);
}

async function claimIds(
  { db, tableName }: PipelineTable,
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

/** Puts up to 100 new records in one transaction: all are written or none. */
async function putAllNew(
  { db, tableName }: PipelineTable,
  records: NewRecord[],
  what: string,
): Promise<void> {
  try {
    await refusingTooLarge(() =>
      db.send(
        new TransactWriteCommand({ TransactItems: records.map((record) => putNew(tableName, record.item)) }),
      ),
    );
  } catch (error) {
    throw batchConflict(
      error,
      records,
      (ids) => `These ${what} are already recorded: ${ids}. Nothing in the batch was recorded.`,
    );
  }
}

async function newest<T>(
  { db, tableName }: PipelineTable,
  partition: string,
  limit: number,
  parse: (item: unknown) => T,
  since?: string,
): Promise<T[]> {
  // The window's lower bound is part of the key condition: older items are never read.
  const { Items = [] } = await db.send(
    new QueryCommand({
      TableName: tableName,
      KeyConditionExpression: since === undefined ? 'pk = :pk' : 'pk = :pk AND sk >= :since',
      ExpressionAttributeValues: { ':pk': partition, ...(since === undefined ? {} : { ':since': since }) },
      ScanIndexForward: false,
      Limit: limit,
    }),
  );
  return Items.map(parse);
}

async function createPipeline(
  { db, tableName }: PipelineTable,
  pipeline: Pipeline,
  configuration: Configuration,
): Promise<void> {
  await refusingTooLarge(() =>
    db.send(
      new TransactWriteCommand({
        TransactItems: [
          putNew(tableName, {
            ...pipelineKey(pipeline.id),
            ...pipelineIndexKey(pipeline),
            latestConfigurationVersion: configuration.version,
            ...pipeline,
          }),
          putNew(tableName, configurationItem(configuration)),
          servingPut(tableName, {
            pipelineId: pipeline.id,
            teamId: pipeline.teamId,
            active: configuration,
            rollout: null,
          }),
        ],
      }),
    ),
  );
}

async function getPipeline({ db, tableName, read }: PipelineTable, id: string): Promise<Pipeline | null> {
  const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: pipelineKey(id) }));
  // A pipeline whose deletion was requested is gone for every reader from that moment.
  return Item && Item.deletedAt === undefined ? read.pipeline(Item) : null;
}

function listPipelines({ db, tableName, read }: PipelineTable, teamId: string, page: PageRequest) {
  return queryPage(
    db,
    {
      tableName,
      indexName: 'gsi1',
      partition: { name: 'gsi1pk', value: teamPipelinesPartition(teamId) },
      cursorAttributes: KEY_ATTRIBUTES,
    },
    page,
    read.pipeline,
  );
}

async function getConfiguration(
  { db, tableName, read }: PipelineTable,
  pipelineId: string,
  configurationId: string,
): Promise<Configuration | null> {
  const { Item } = await db.send(
    new GetCommand({ TableName: tableName, Key: configurationKey(pipelineId, configurationId) }),
  );
  return Item ? read.configuration(Item) : null;
}

async function getServingState(
  { db, tableName }: PipelineTable,
  pipelineId: string,
): Promise<ServingState | null> {
  const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: servingKey(pipelineId) }));
  if (typeof Item?.state !== 'string') return null;
  return readServingState(parseStoredJson(Item.state));
}

const readServingState = /* @__PURE__ */ itemReader(servingStateSchema, 'serving state');

/** A stored JSON string; one that is not JSON is read as nothing, and the schema refuses it. */
function parseStoredJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

async function activateConfiguration(
  { db, tableName, eventsTable }: PipelineTable,
  activation: Activation,
  event: DomainEvent,
  serving?: ServingState,
): Promise<void> {
  if (!eventsTable) throw new Error('The pipeline repository was built without the events table.');
  try {
    await db.send(
      new TransactWriteCommand({
        TransactItems: [
          activatePipelineUpdate(tableName, activation),
          {
            ConditionCheck: {
              TableName: tableName,
              Key: configurationKey(activation.pipelineId, activation.configurationId),
              ConditionExpression: 'attribute_exists(pk)',
            },
          },
          putNew(tableName, activationItem(activation)),
          eventPut(eventsTable, event),
          ...(serving ? [servingPut(tableName, serving)] : []),
        ],
      }),
    );
  } catch (error) {
    const failed = failedTransactionItems(error);
    if (failed.includes(0)) {
      throw new ConflictError(
        'The active configuration changed while this request was made; reload and retry.',
      );
    }
    if (failed.includes(1))
      throw new ConflictError(`Configuration ${activation.configurationId} does not exist.`);
    throw error;
  }
}

function listActivations({ db, tableName, read }: PipelineTable, pipelineId: string, page: PageRequest) {
  return queryPage(
    db,
    {
      tableName,
      partition: { name: 'pk', value: pipelinePartition(pipelineId) },
      sortKeyPrefix: ACTIVATION_PREFIX,
      cursorAttributes: ['pk', 'sk'],
    },
    page,
    read.activation,
  );
}

/**
 * The pipeline's next configuration version: one atomic increment (a completed run's proposal, an
 * approval's partial or rebased configuration), no read-compare-retry, so a hundred runs of one
 * pipeline finishing at once each get their own version at the first try. A number taken by a completion
 * that then loses its lease is skipped: versions are unique, not gapless.
 */
export async function nextConfigurationVersion(
  db: DynamoDBDocumentClient,
  dataTable: string,
  pipelineId: string,
): Promise<number> {
  try {
    const { Attributes } = await db.send(
      new UpdateCommand({
        TableName: dataTable,
        Key: pipelineKey(pipelineId),
        UpdateExpression:
          'SET latestConfigurationVersion = if_not_exists(latestConfigurationVersion, :one) + :one',
        // A pipeline whose deletion was requested takes no new configuration.
        ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(deletedAt)',
        ExpressionAttributeValues: { ':one': 1 },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    return Number(Attributes?.latestConfigurationVersion);
  } catch (error) {
    if (isConditionFailure(error)) throw new NotFoundError(`Pipeline ${pipelineId} no longer exists.`);
    throw error;
  }
}
