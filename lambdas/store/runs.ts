/*
 * Synthesis runs in the runs table, one item per run: the DynamoDB adapter of RunRepository, composed
 * of the worker's and the reviewer's stores, with the reads and the sweeper's query.
 */
import { type DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { ConflictError } from '../core/errors.ts';
import type { PageRequest, RunRepository } from '../core/ports.ts';
import type { Page, SynthesisRun } from '../core/schemas.ts';
import { isConditionFailure } from './conditions.ts';
import { runKey } from './keys.ts';
import { queryPage } from './query-page.ts';
import { makeRunGenerationStore } from './run-generation.ts';
import { makeRunReviewStore } from './run-review.ts';
import { type RunTables, toRun } from './run-table.ts';

export type { RunTables };

const RUN_INDEX = 'byPipeline';
/** Runs by status and creation time: the sweeper's index (a Query, never a Scan). */
const STATUS_INDEX = 'byStatus';

/** DynamoDB adapter of RunRepository; every status change is a conditional write. */
export function makeRunRepository(db: DynamoDBDocumentClient, tables: RunTables): RunRepository {
  return {
    ...makeRunGenerationStore(db, tables),
    ...makeRunReviewStore(db, tables),

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
      const { Item } = await db.send(new GetCommand({ TableName: tables.runs, Key: runKey(id) }));
      return Item ? toRun(Item) : null;
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
