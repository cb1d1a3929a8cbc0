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
import { failedTransactionItems } from './conditions.ts';
import { itemReader } from './items.ts';
import { dataKeys, KEY_ATTRIBUTES } from './keys.ts';
import { queryPage } from './query-page.ts';

const readPipeline = itemReader(pipelineSchema, 'pipeline');
const readConfiguration = itemReader(configurationSchema, 'configuration');
const readActivation = itemReader(activationSchema, 'activation');
const readSignal = itemReader(signalSchema, 'signal');
const readExecution = itemReader(executionSchema, 'execution');

export function configurationItem(configuration: Configuration) {
  return { ...dataKeys.configurationOf(configuration), ...configuration };
}

export function activationItem(activation: Activation) {
  return { ...dataKeys.activation(activation), ...activation };
}

/** The transaction item that moves a pipeline's active configuration, guarded by what it was. */
export function activatePipelineUpdate(tableName: string, activation: Activation) {
  return {
    Update: {
      TableName: tableName,
      Key: dataKeys.pipeline(activation.pipelineId),
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
  return { ...dataKeys.signal(signal), ...signal };
}

function executionItem(execution: Execution) {
  return { ...dataKeys.execution(execution), ...execution };
}

/** DynamoDB adapter of PipelineRepository. */
export function makePipelineRepository(db: DynamoDBDocumentClient, tableName: string): PipelineRepository {
  /** Puts up to 100 new items in one transaction: all are written or none. */
  async function putAllNew(items: Array<Record<string, unknown> & { id: unknown }>, what: string) {
    try {
      await db.send(
        new TransactWriteCommand({
          TransactItems: items.map((Item) => ({
            Put: { TableName: tableName, Item, ConditionExpression: 'attribute_not_exists(pk)' },
          })),
        }),
      );
    } catch (error) {
      const failed = failedTransactionItems(error);
      if (failed.length > 0) {
        const ids = failed.map((index) => String(items[index]?.id)).join(', ');
        throw new ConflictError(
          `These ${what} are already recorded: ${ids}. Nothing in the batch was recorded.`,
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
      await db.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Put: {
                TableName: tableName,
                Item: {
                  ...dataKeys.pipeline(pipeline.id),
                  ...dataKeys.pipelineIndex(pipeline),
                  latestConfigurationVersion: configuration.version,
                  ...pipeline,
                },
                ConditionExpression: 'attribute_not_exists(pk)',
              },
            },
            {
              Put: {
                TableName: tableName,
                Item: configurationItem(configuration),
                ConditionExpression: 'attribute_not_exists(pk)',
              },
            },
          ],
        }),
      );
    },

    async getPipeline(id) {
      const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: dataKeys.pipeline(id) }));
      return Item ? readPipeline(Item) : null;
    },

    listPipelines: (teamId, page) =>
      queryPage(
        db,
        {
          tableName,
          indexName: 'gsi1',
          partition: { name: 'gsi1pk', value: dataKeys.teamPipelines(teamId) },
          cursorAttributes: KEY_ATTRIBUTES,
        },
        page,
        readPipeline,
      ),

    async getConfiguration(pipelineId, configurationId) {
      const { Item } = await db.send(
        new GetCommand({ TableName: tableName, Key: dataKeys.configuration(pipelineId, configurationId) }),
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
                  Key: dataKeys.configuration(activation.pipelineId, activation.configurationId),
                  ConditionExpression: 'attribute_exists(pk)',
                },
              },
              {
                Put: {
                  TableName: tableName,
                  Item: activationItem(activation),
                  ConditionExpression: 'attribute_not_exists(pk)',
                },
              },
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
          partition: { name: 'pk', value: dataKeys.pipelinePartition(pipelineId) },
          sortKeyPrefix: dataKeys.activationPrefix,
          cursorAttributes: ['pk', 'sk'],
        },
        page,
        readActivation,
      ),

    recentSignals: (pipelineId, limit) => newest(dataKeys.signals(pipelineId), limit, readSignal),
    recentExecutions: (pipelineId, limit) => newest(dataKeys.executions(pipelineId), limit, readExecution),
  };
}
