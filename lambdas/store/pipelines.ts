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
import type { PipelineRepository } from '../core/ports.ts';
import {
  type Activation,
  activationSchema,
  type Configuration,
  configurationSchema,
  type Execution,
  executionSchema,
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

/** DynamoDB adapter of PipelineRepository. */
export function makePipelineRepository(db: DynamoDBDocumentClient, tableName: string): PipelineRepository {
  const readPipeline = itemReader(pipelineSchema, 'pipeline');
  const readConfiguration = itemReader(configurationSchema, 'configuration');
  const readActivation = itemReader(activationSchema, 'activation');
  const readSignal = itemReader(signalSchema, 'signal');
  const readExecution = itemReader(executionSchema, 'execution');

  /** Puts up to 100 new items in one transaction: all are written or none. */
  async function putAllNew(items: Array<Record<string, unknown> & { id: unknown }>, what: string) {
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

  async function newest<T>(partition: string, limit: number, parse: (item: unknown) => T): Promise<T[]> {
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

  return {
    async createPipeline(pipeline, configuration) {
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
    },

    async getPipeline(id) {
      const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: pipelineKey(id) }));
      return Item ? readPipeline(Item) : null;
    },

    listPipelines: (teamId, page) =>
      queryPage(
        db,
        {
          tableName,
          indexName: 'gsi1',
          partition: { name: 'gsi1pk', value: teamPipelinesPartition(teamId) },
          cursorAttributes: KEY_ATTRIBUTES,
        },
        page,
        readPipeline,
      ),

    async getConfiguration(pipelineId, configurationId) {
      const { Item } = await db.send(
        new GetCommand({ TableName: tableName, Key: configurationKey(pipelineId, configurationId) }),
      );
      return Item ? readConfiguration(Item) : null;
    },

    recordSignals: (signals) => putAllNew(signals.map(signalItem), 'signals'),
    recordExecutions: (executions) => putAllNew(executions.map(executionItem), 'executions'),

    async activateConfiguration(activation) {
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
    },

    listActivations: (pipelineId, page) =>
      queryPage(
        db,
        {
          tableName,
          partition: { name: 'pk', value: pipelinePartition(pipelineId) },
          sortKeyPrefix: ACTIVATION_PREFIX,
          cursorAttributes: ['pk', 'sk'],
        },
        page,
        readActivation,
      ),

    recentSignals: (pipelineId, limit) => newest(signalsPartition(pipelineId), limit, readSignal),
    recentExecutions: (pipelineId, limit) => newest(executionsPartition(pipelineId), limit, readExecution),
  };
}
