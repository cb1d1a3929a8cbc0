import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import {
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { ConflictError, NotFoundError, PayloadTooLargeError } from '../core/errors.ts';
import type { PageRequest, RunRepository } from '../core/ports.ts';
import { statusesAllowedBefore } from '../core/run-state.ts';
import { type Configuration, type Page, type SynthesisRun, synthesisRunSchema } from '../core/schemas.ts';
import { failedTransactionItems, isConditionFailure, isItemTooLarge } from './conditions.ts';
import { activatePipelineUpdate, activationItem, configurationItem, pipelineKey } from './pipelines.ts';
import { queryPage } from './query-page.ts';

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
/** Runs by status and creation time: the sweeper's index (a Query, never a Scan). */
const STATUS_INDEX = 'byStatus';

/** DynamoDB adapter of RunRepository; every status change is a conditional write. */
export function makeRunRepository(db: DynamoDBDocumentClient, tables: RunTables): RunRepository {
  /** The 409 for a decision on a run that is not `generated`: it names the status the run is in. */
  async function notDecidable(runId: string, wanted: 'approved' | 'rejected'): Promise<ConflictError> {
    const { Item } = await db.send(
      new GetCommand({ TableName: tables.runs, Key: { id: runId }, ConsistentRead: true }),
    );
    const status = Item ? String(Item.status) : 'missing';
    return new ConflictError(`The run is ${status}; only a generated run can be ${wanted}.`);
  }

  return {
    async create(run) {
      try {
        await db.send(
          new PutCommand({
            TableName: tables.runs,
            Item: run,
            ConditionExpression: 'attribute_not_exists(id)',
          }),
        );
      } catch (error) {
        if (isConditionFailure(error))
          throw new ConflictError(`A synthesis run with id ${run.id} already exists.`);
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
        return { outcome: 'claimed', run: toRun(Attributes ?? {}) };
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
      }
      // Not claimable: say why, from a strongly consistent read of what is there now.
      const { Item } = await db.send(
        new GetCommand({ TableName: tables.runs, Key: { id }, ConsistentRead: true }),
      );
      if (!Item) return { outcome: 'missing' };
      const run = toRun(Item);
      return run.status === 'generating' || run.status === 'pending'
        ? { outcome: 'leased', run }
        : { outcome: 'finished', run };
    },

    async completeGenerated(run, proposed, leaseStartedAt) {
      const dataTable = tables.data;
      if (!dataTable) throw new Error('The run repository was built without the data table.');
      // One atomic increment per completion: no read-compare-retry, so a hundred runs of one
      // pipeline finishing at once each get their own version at the first try. A number taken
      // by a completion that then loses its lease is skipped: versions are unique, not gapless.
      let version: number;
      try {
        const { Attributes } = await db.send(
          new UpdateCommand({
            TableName: dataTable,
            Key: pipelineKey(run.pipelineId),
            UpdateExpression:
              'SET latestConfigurationVersion = if_not_exists(latestConfigurationVersion, :one) + :one',
            ConditionExpression: 'attribute_exists(pk)',
            ExpressionAttributeValues: { ':one': 1 },
            ReturnValues: 'UPDATED_NEW',
          }),
        );
        version = Number(Attributes?.latestConfigurationVersion);
      } catch (error) {
        if (isConditionFailure(error))
          throw new NotFoundError(`Pipeline ${run.pipelineId} no longer exists.`);
        throw error;
      }
      const configuration: Configuration = { ...proposed, version };
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
        if (failed.includes(1)) {
          throw new ConflictError(`Synthesis run ${run.id} is no longer held by this worker.`);
        }
        if (failed.includes(0)) {
          throw new ConflictError(`Configuration ${configuration.id} already exists.`);
        }
        if (isItemTooLarge(error)) {
          throw new PayloadTooLargeError(
            'The proposal is too large to store: the run or its proposed configuration exceeds the 400 KB ' +
              'that one DynamoDB item holds. Start a new run; if it happens again, shorten the slot settings.',
          );
        }
        throw error;
      }
    },

    async releaseForRetry(id, reason, leaseStartedAt) {
      try {
        await db.send(
          new UpdateCommand({
            TableName: tables.runs,
            Key: { id },
            UpdateExpression: 'SET #status = :pending, retryReason = :reason',
            ConditionExpression: '#status = :generating AND generationStartedAt = :lease',
            ExpressionAttributeNames: { '#status': 'status' },
            ExpressionAttributeValues: {
              ':reason': reason,
              ':pending': 'pending',
              ':generating': 'generating',
              ':lease': leaseStartedAt,
            },
          }),
        );
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
      }
    },

    async listStale(status, createdBefore, limit) {
      const { Items = [] } = await db.send(
        new QueryCommand({
          TableName: tables.runs,
          IndexName: STATUS_INDEX,
          KeyConditionExpression: '#status = :status AND createdAt < :before',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':status': status, ':before': createdBefore },
          Limit: limit,
        }),
      );
      return Items.map(toRun);
    },

    async fail(id, errorMessage, at, from, usage) {
      const allowed = from.filter((status) => statusesAllowedBefore('failed').includes(status));
      const values = Object.fromEntries(allowed.map((status, index) => [`:from${index}`, status]));
      try {
        const { Attributes } = await db.send(
          new UpdateCommand({
            TableName: tables.runs,
            Key: { id },
            UpdateExpression: `SET #status = :failed, errorMessage = :message, generationCompletedAt = :at${usage ? ', #usage = :usage' : ''}`,
            ConditionExpression: `attribute_exists(id) AND #status IN (${Object.keys(values).join(', ')})`,
            // USAGE is a DynamoDB reserved word.
            ExpressionAttributeNames: { '#status': 'status', ...(usage ? { '#usage': 'usage' } : {}) },
            ExpressionAttributeValues: {
              ':failed': 'failed',
              ':message': errorMessage,
              ':at': at,
              ...values,
              ...(usage ? { ':usage': usage } : {}),
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

    async approve(run, decision, activation) {
      const dataTable = tables.data;
      if (!dataTable) throw new Error('The run repository was built without the data table.');
      const approved: SynthesisRun = {
        ...run,
        status: 'approved',
        approvedAt: decision.at,
        approvedBy: decision.by,
      };
      try {
        await db.send(
          new TransactWriteCommand({
            TransactItems: [
              {
                Update: {
                  TableName: tables.runs,
                  Key: { id: run.id },
                  UpdateExpression: 'SET #status = :approved, approvedAt = :at, approvedBy = :by',
                  ConditionExpression: '#status = :generated',
                  ExpressionAttributeNames: { '#status': 'status' },
                  ExpressionAttributeValues: {
                    ':approved': 'approved',
                    ':generated': 'generated',
                    ':at': decision.at,
                    ':by': decision.by,
                  },
                },
              },
              activatePipelineUpdate(dataTable, activation),
              {
                Put: {
                  TableName: dataTable,
                  Item: activationItem(activation),
                  ConditionExpression: 'attribute_not_exists(pk)',
                },
              },
            ],
          }),
        );
        return approved;
      } catch (error) {
        const failed = failedTransactionItems(error);
        if (failed.includes(0)) throw await notDecidable(run.id, 'approved');
        if (failed.includes(1)) {
          throw new ConflictError(
            `The pipeline's active configuration is no longer ${run.baseConfigurationId}, the base of this run; ` +
              'nothing was changed. Start a new synthesis run on the current configuration.',
          );
        }
        throw error;
      }
    },

    async reject(runId, decision) {
      try {
        const { Attributes } = await db.send(
          new UpdateCommand({
            TableName: tables.runs,
            Key: { id: runId },
            UpdateExpression:
              'SET #status = :rejected, rejectedAt = :at, rejectedBy = :by, rejectionReason = :reason',
            ConditionExpression: '#status = :generated',
            ExpressionAttributeNames: { '#status': 'status' },
            ExpressionAttributeValues: {
              ':rejected': 'rejected',
              ':generated': 'generated',
              ':at': decision.at,
              ':by': decision.by,
              ':reason': decision.reason,
            },
            ReturnValues: 'ALL_NEW',
          }),
        );
        return toRun(Attributes ?? {});
      } catch (error) {
        if (isConditionFailure(error)) throw await notDecidable(runId, 'rejected');
        throw error;
      }
    },

    listByPipeline(pipelineId: string, page: PageRequest, filter = {}): Promise<Page<SynthesisRun>> {
      return queryPage(
        db,
        {
          tableName: tables.runs,
          indexName: RUN_INDEX,
          partition: { name: 'pipelineId', value: pipelineId },
          cursorAttributes: ['id', 'pipelineId', 'createdAt'],
          ...(filter.status
            ? {
                filter: {
                  expression: '#status = :status',
                  names: { '#status': 'status' },
                  values: { ':status': filter.status },
                },
              }
            : {}),
        },
        page,
        toRun,
      );
    },
  };
}
