/*
 * Pipelines, their configurations and activations, and the signals and executions recorded
 * against them, in the data table (keys: store/keys.ts): the DynamoDB adapter of PipelineRepository.
 */
import {
  type DynamoDBDocumentClient,
  GetCommand,
  QueryCommand,
  TransactWriteCommand,
} from '@aws-sdk/lib-dynamodb';
import { ConflictError } from '../core/errors.ts';
import type { PageRequest, PipelineRepository } from '../core/ports.ts';
import {
  type Activation,
  activationSchema,
  type Configuration,
  configurationSchema,
  type Execution,
  executionSchema,
  type Pipeline,
  pipelineSchema,
  type Signal,
  signalSchema,
} from '../core/schemas.ts';
import { failedTransactionItems, putNew, refusingTooLarge } from './conditions.ts';
import { itemReader } from './items.ts';
import {
  ACTIVATION_PREFIX,
  activationKey,
  configurationKey,
  executionKey,
  executionsPartition,
  KEY_ATTRIBUTES,
  pipelineIndexKey,
  pipelineKey,
  pipelinePartition,
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

/** The transaction item that moves a pipeline's active configuration, guarded by what it was. */
export function activatePipelineUpdate(tableName: string, activation: Activation) {
  return {
    Update: {
      TableName: tableName,
      Key: pipelineKey(activation.pipelineId),
      UpdateExpression: 'SET activeConfigurationId = :next',
      ConditionExpression: 'activeConfigurationId = :previous',
      ExpressionAttributeValues: {
        ':next': activation.configurationId,
        ':previous': activation.previousConfigurationId,
      },
    },
  };
}

function signalItem(signal: Signal) {
  return { ...signalKey(signal), ...signal };
}

function executionItem(execution: Execution) {
  return { ...executionKey(execution), ...execution };
}

/** The items' readers; built by the factory, like the schemas' other users do. */
function pipelineReaders() {
  return {
    pipeline: itemReader(pipelineSchema, 'pipeline'),
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
  read: ReturnType<typeof pipelineReaders>;
}

/** DynamoDB adapter of PipelineRepository. */
export function makePipelineRepository(db: DynamoDBDocumentClient, tableName: string): PipelineRepository {
  const table: PipelineTable = { db, tableName, read: pipelineReaders() };
  const { read } = table;
  return {
    createPipeline: (pipeline, configuration) => createPipeline(table, pipeline, configuration),
    getPipeline: (id) => getPipeline(table, id),
    listPipelines: (teamId, page) => listPipelines(table, teamId, page),
    getConfiguration: (pipelineId, configurationId) => getConfiguration(table, pipelineId, configurationId),
    recordSignals: (signals) => putAllNew(table, signals.map(signalItem), 'signals'),
    recordExecutions: (executions) => putAllNew(table, executions.map(executionItem), 'executions'),
    activateConfiguration: (activation) => activateConfiguration(table, activation),
    listActivations: (pipelineId, page) => listActivations(table, pipelineId, page),
    recentSignals: (pipelineId, limit) => newest(table, signalsPartition(pipelineId), limit, read.signal),
    recentExecutions: (pipelineId, limit) =>
      newest(table, executionsPartition(pipelineId), limit, read.execution),
  };
}

/** Puts up to 100 new items in one transaction: all are written or none. */
async function putAllNew(
  { db, tableName }: PipelineTable,
  items: Array<Record<string, unknown> & { id: unknown }>,
  what: string,
): Promise<void> {
  try {
    await refusingTooLarge(() =>
      db.send(new TransactWriteCommand({ TransactItems: items.map((item) => putNew(tableName, item)) })),
    );
  } catch (error) {
    const failed = failedTransactionItems(error);
    if (failed.length > 0) {
      const ids = failed.map((index) => String(items[index]?.id)).join(', ');
      throw new ConflictError(
        `These ${what} are already recorded: ${ids}. Nothing in the batch was recorded.`,
        {
          cause: error,
        },
      );
    }
    throw error;
  }
}

async function newest<T>(
  { db, tableName }: PipelineTable,
  partition: string,
  limit: number,
  parse: (item: unknown) => T,
): Promise<T[]> {
  const { Items = [] } = await db.send(
    new QueryCommand({
      TableName: tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': partition },
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
        ],
      }),
    ),
  );
}

async function getPipeline({ db, tableName, read }: PipelineTable, id: string): Promise<Pipeline | null> {
  const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: pipelineKey(id) }));
  return Item ? read.pipeline(Item) : null;
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

async function activateConfiguration(
  { db, tableName }: PipelineTable,
  activation: Activation,
): Promise<void> {
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
