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
import { queryPage } from './query-page.ts';

/*
 * Keys of the data table. Signals and executions live in one partition per pipeline with a
 * time-ordered sort key, so "the newest N" is a single Query with Limit whatever the history size.
 *   pipeline       pk PIPELINE#<id>              sk PIPELINE          gsi1 TEAM#<teamId>#PIPELINES / <createdAt>#<id>
 *   configuration  pk PIPELINE#<id>              sk CONFIGURATION#<configurationId>
 *   signal         pk PIPELINE#<id>#SIGNALS      sk <occurredAt>#<signalId>
 *   execution      pk PIPELINE#<id>#EXECUTIONS   sk <startedAt>#<executionId>
 */
const KEY_ATTRIBUTES = ['pk', 'sk', 'gsi1pk', 'gsi1sk', 'latestConfigurationVersion', 'expiresAtEpoch'];

function withoutKeys(item: Record<string, unknown>): Record<string, unknown> {
  const record = { ...item };
  for (const key of KEY_ATTRIBUTES) delete record[key];
  return record;
}

export function pipelineKey(pipelineId: string) {
  return { pk: `PIPELINE#${pipelineId}`, sk: 'PIPELINE' };
}

function teamPipelinesPartition(teamId: string) {
  return `TEAM#${teamId}#PIPELINES`;
}

export function configurationItem(configuration: Configuration) {
  return {
    pk: `PIPELINE#${configuration.pipelineId}`,
    sk: `CONFIGURATION#${configuration.id}`,
    ...configuration,
  };
}

/** Activations sort by time within the pipeline's partition: the pipeline's history, one Query. */
export function activationItem(activation: Activation) {
  return {
    pk: `PIPELINE#${activation.pipelineId}`,
    sk: `ACTIVATION#${activation.activatedAt}#${activation.id}`,
    ...activation,
  };
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
  return { pk: `PIPELINE#${signal.pipelineId}#SIGNALS`, sk: `${signal.occurredAt}#${signal.id}`, ...signal };
}

function executionItem(execution: Execution) {
  return {
    pk: `PIPELINE#${execution.pipelineId}#EXECUTIONS`,
    sk: `${execution.startedAt}#${execution.id}`,
    ...execution,
  };
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
    return Items.map((item) => parse(withoutKeys(item)));
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
                  ...pipelineKey(pipeline.id),
                  gsi1pk: teamPipelinesPartition(pipeline.teamId),
                  gsi1sk: `${pipeline.createdAt}#${pipeline.id}`,
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
      const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: pipelineKey(id) }));
      return Item ? pipelineSchema.parse(withoutKeys(Item)) : null;
    },

    listPipelines: (teamId, page) =>
      queryPage(
        db,
        {
          tableName,
          indexName: 'gsi1',
          partition: { name: 'gsi1pk', value: teamPipelinesPartition(teamId) },
          cursorAttributes: ['pk', 'sk', 'gsi1pk', 'gsi1sk'],
        },
        page,
        (item) => pipelineSchema.parse(withoutKeys(item)),
      ),

    async getConfiguration(pipelineId, configurationId) {
      const { Item } = await db.send(
        new GetCommand({
          TableName: tableName,
          Key: { pk: `PIPELINE#${pipelineId}`, sk: `CONFIGURATION#${configurationId}` },
        }),
      );
      return Item ? configurationSchema.parse(withoutKeys(Item)) : null;
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
                  Key: {
                    pk: `PIPELINE#${activation.pipelineId}`,
                    sk: `CONFIGURATION#${activation.configurationId}`,
                  },
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
          partition: { name: 'pk', value: `PIPELINE#${pipelineId}` },
          sortKeyPrefix: 'ACTIVATION#',
          cursorAttributes: ['pk', 'sk'],
        },
        page,
        (item) => activationSchema.parse(withoutKeys(item)),
      ),

    recentSignals: (pipelineId, limit) =>
      newest(`PIPELINE#${pipelineId}#SIGNALS`, limit, (item) => signalSchema.parse(item)),
    recentExecutions: (pipelineId, limit) =>
      newest(`PIPELINE#${pipelineId}#EXECUTIONS`, limit, (item) => executionSchema.parse(item)),
  };
}
