/*
 * Pipelines, their configurations and activations, and the signals and executions recorded
 * against them (store/records.ts), in the data table (keys: store/keys.ts): the DynamoDB adapter
 * of PipelineRepository.
 */
import { type DynamoDBDocumentClient, GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { ConflictError } from '../core/errors.ts';
import type { DomainEvent } from '../core/events.ts';
import type { PageRequest } from '../core/ports/common.ts';
import type { PipelineReads, PipelineRepository } from '../core/ports/pipelines.ts';
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
import { executionSchema, signalSchema } from '../core/schemas/records.ts';
import { failedTransactionItems, putNew, refusingTooLarge } from './conditions.ts';
import { configurationHistory } from './configuration-history.ts';
import { eventPut } from './events.ts';
import { itemReader } from './items.ts';
import {
  ACTIVATION_PREFIX,
  configurationKey,
  executionsPartition,
  KEY_ATTRIBUTES,
  pipelineIndexKey,
  pipelineKey,
  pipelinePartition,
  servingKey,
  signalsPartition,
  teamPipelinesPartition,
} from './keys.ts';
import {
  activatePipelineUpdate,
  activationItem,
  configurationItem,
  sendContendedAgain,
  servingPut,
  servingVersionBump,
} from './pipeline-writes.ts';
import { queryPage } from './query-page.ts';
import { newest, recordExecutions, recordSignals } from './records.ts';

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

/** The reads of PipelineRepository alone, for a function that only reads (none of the writes' code). */
export function makePipelineReads(db: DynamoDBDocumentClient, tableName: string): PipelineReads {
  return pipelineReads({ db, tableName, eventsTable: undefined, read: pipelineReaders() });
}

function pipelineReads(table: PipelineTable): PipelineReads {
  const { db, tableName, read } = table;
  return {
    getPipeline: (id) => getPipeline(table, id),
    listPipelines: (teamId, page) => listPipelines(table, teamId, page),
    getConfiguration: (pipelineId, configurationId) => getConfiguration(table, pipelineId, configurationId),
    getServingState: (pipelineId) => getServingState(table, pipelineId),
    listActivations: (pipelineId, page) => listActivations(table, pipelineId, page),
    configurationHistory: (pipelineId, configurationId) =>
      configurationHistory(db, tableName, pipelineId, configurationId),
    recentSignals: (pipelineId, limit, since) =>
      newest(table, (shard) => signalsPartition(pipelineId, shard), limit, read.signal, since),
    recentExecutions: (pipelineId, limit, since) =>
      newest(table, (shard) => executionsPartition(pipelineId, shard), limit, read.execution, since),
  };
}

/** DynamoDB adapter of PipelineRepository. */
export function makePipelineRepository(
  db: DynamoDBDocumentClient,
  tableName: string,
  eventsTable?: string,
): PipelineRepository {
  const table: PipelineTable = { db, tableName, eventsTable, read: pipelineReaders() };
  return {
    ...pipelineReads(table),
    createPipeline: (pipeline, configuration) => createPipeline(table, pipeline, configuration),
    recordSignals: (signals, retentionDays, rollout) =>
      recordSignals(table, signals, retentionDays, rollout ?? null),
    recordExecutions: (executions, retentionDays, rollout) =>
      recordExecutions(table, executions, retentionDays, rollout),
    activateConfiguration: (activation, event, serving) =>
      activateConfiguration(table, activation, event, serving),
  };
}

async function createPipeline(
  { db, tableName }: PipelineTable,
  pipeline: Pipeline,
  configuration: Configuration,
): Promise<void> {
  await refusingTooLarge(() =>
    sendContendedAgain(() =>
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
            servingVersionBump(tableName, pipeline.teamId),
          ],
        }),
      ),
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
  serving: ServingState,
): Promise<void> {
  if (!eventsTable) throw new Error('The pipeline repository was built without the events table.');
  try {
    await sendContendedAgain(() =>
      db.send(
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
            servingPut(tableName, serving),
            servingVersionBump(tableName, serving.teamId),
          ],
        }),
      ),
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
