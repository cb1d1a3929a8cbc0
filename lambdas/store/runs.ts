import { GetCommand, PutCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ConflictError, NotFoundError } from '../core/errors.ts';
import type { PageRequest, RunRepository } from '../core/ports.ts';
import { statusesAllowedBefore } from '../core/run-state.ts';
import { type Configuration, type Page, type SynthesisRun, synthesisRunSchema } from '../core/schemas.ts';
import { failedTransactionItems, isConditionFailure } from './conditions.ts';
import { decodeCursor, encodeCursor } from './cursor.ts';
import { configurationItem, pipelineKey } from './pipelines.ts';

export interface RunTables {
  runs: string;
  /** Needed only by completeGenerated, which stores the proposed configuration. */
  data?: string;
}

/** A run item is the run itself: attribute names are the wire names, so the console reads like the API. */
function toRun(item: Record<string, unknown>): SynthesisRun {
  return synthesisRunSchema.parse(item);
}

const RUN_INDEX = 'byPipeline';
const MAX_VERSION_RETRIES = 5;

/** DynamoDB adapter of RunRepository; every status change is a conditional write. */
export function makeRunRepository(db: DynamoDBDocumentClient, tables: RunTables): RunRepository {
  return {
    async create(run) {
      try {
        await db.send(
          new PutCommand({ TableName: tables.runs, Item: run, ConditionExpression: 'attribute_not_exists(id)' }),
        );
      } catch (error) {
        if (isConditionFailure(error)) throw new ConflictError(`A synthesis run with id ${run.id} already exists.`);
        throw error;
      }
    },

    async get(id) {
      const { Item } = await db.send(new GetCommand({ TableName: tables.runs, Key: { id } }));
      return Item ? toRun(Item) : null;
    },

    async claim(id, startedAt, staleBefore) {
      try {
        const { Attributes } = await db.send(
          new UpdateCommand({
            TableName: tables.runs,
            Key: { id },
            UpdateExpression: 'SET #status = :generating, generationStartedAt = :now',
            ConditionExpression:
              '#status = :pending OR (#status = :generating AND generationStartedAt < :staleBefore)',
            ExpressionAttributeNames: { '#status': 'status' },
            ExpressionAttributeValues: {
              ':generating': 'generating',
              ':pending': 'pending',
              ':now': startedAt,
              ':staleBefore': staleBefore,
            },
            ReturnValues: 'ALL_NEW',
          }),
        );
        return Attributes ? toRun(Attributes) : null;
      } catch (error) {
        if (isConditionFailure(error)) return null;
        throw error;
      }
    },

    async completeGenerated(run, proposed, leaseStartedAt) {
      const dataTable = tables.data;
      if (!dataTable) throw new Error('The run repository was built without the data table.');
      for (let attempt = 0; attempt < MAX_VERSION_RETRIES; attempt++) {
        const { Item: pipeline } = await db.send(
          new GetCommand({ TableName: dataTable, Key: pipelineKey(run.pipelineId), ConsistentRead: true }),
        );
        if (!pipeline) throw new NotFoundError(`Pipeline ${run.pipelineId} no longer exists.`);
        const previousVersion = Number(pipeline.latestConfigurationVersion ?? 1);
        const configuration: Configuration = { ...proposed, version: previousVersion + 1 };
        try {
          await db.send(
            new TransactWriteCommand({
              TransactItems: [
                {
                  Put: {
                    TableName: dataTable,
                    Item: configurationItem(configuration),
                    ConditionExpression: 'attribute_not_exists(pk)',
                  },
                },
                {
                  Update: {
                    TableName: dataTable,
                    Key: pipelineKey(run.pipelineId),
                    UpdateExpression: 'SET latestConfigurationVersion = :next',
                    ConditionExpression:
                      'attribute_exists(pk) AND (latestConfigurationVersion = :previous OR attribute_not_exists(latestConfigurationVersion))',
                    ExpressionAttributeValues: { ':next': configuration.version, ':previous': previousVersion },
                  },
                },
                {
                  Put: {
                    TableName: tables.runs,
                    Item: run,
                    ConditionExpression: '#status = :generating AND generationStartedAt = :lease',
                    ExpressionAttributeNames: { '#status': 'status' },
                    ExpressionAttributeValues: { ':generating': 'generating', ':lease': leaseStartedAt },
                  },
                },
              ],
            }),
          );
          return run;
        } catch (error) {
          const failed = failedTransactionItems(error);
          if (failed.includes(2)) {
            throw new ConflictError(`Synthesis run ${run.id} is no longer held by this worker.`);
          }
          if (failed.includes(1) || failed.includes(0)) continue; // another configuration won the version
          throw error;
        }
      }
      // Transient: the job is redelivered and tries again.
      throw new Error(`Could not allocate a configuration version for pipeline ${run.pipelineId}.`);
    },

    async fail(id, errorMessage, at, from) {
      const allowed = from.filter((status) => statusesAllowedBefore('failed').includes(status));
      const values = Object.fromEntries(allowed.map((status, index) => [`:from${index}`, status]));
      try {
        const { Attributes } = await db.send(
          new UpdateCommand({
            TableName: tables.runs,
            Key: { id },
            UpdateExpression: 'SET #status = :failed, errorMessage = :message, generationCompletedAt = :at',
            ConditionExpression: `attribute_exists(id) AND #status IN (${Object.keys(values).join(', ')})`,
            ExpressionAttributeNames: { '#status': 'status' },
            ExpressionAttributeValues: { ':failed': 'failed', ':message': errorMessage, ':at': at, ...values },
            ReturnValues: 'ALL_NEW',
          }),
        );
        return Attributes ? toRun(Attributes) : null;
      } catch (error) {
        if (isConditionFailure(error)) return null;
        throw error;
      }
    },

    async listByPipeline(pipelineId: string, page: PageRequest): Promise<Page<SynthesisRun>> {
      const startKey = decodeCursor(page.cursor, {
        attributes: ['id', 'pipelineId', 'createdAt'],
        partition: { name: 'pipelineId', value: pipelineId },
      });
      const { Items = [], LastEvaluatedKey } = await db.send(
        new QueryCommand({
          TableName: tables.runs,
          IndexName: RUN_INDEX,
          KeyConditionExpression: 'pipelineId = :pipelineId',
          ExpressionAttributeValues: { ':pipelineId': pipelineId },
          ScanIndexForward: false,
          Limit: page.limit,
          ExclusiveStartKey: startKey,
        }),
      );
      return { items: Items.map(toRun), nextCursor: encodeCursor(LastEvaluatedKey) };
    },
  };
}
