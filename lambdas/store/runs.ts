/*
 * Synthesis runs in the runs table, one item per run: the DynamoDB adapter of RunRepository, composed
 * of the worker's and the reviewer's stores, with the reads and the sweeper's query.
 */
import {
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { ConflictError } from '../core/errors.ts';
import type { PageRequest } from '../core/ports/common.ts';
import type { RunRepository } from '../core/ports/runs.ts';
import type { Page } from '../core/schemas/common.ts';
import type { SynthesisRun } from '../core/schemas/runs.ts';
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
/** Runs hidden at once when their pipeline is deleted (UpdateItems in flight). */
const HIDE_CONCURRENCY = 25;

/** DynamoDB adapter of RunRepository; every status change is a conditional write. */
export function makeRunRepository(db: DynamoDBDocumentClient, tables: RunTables): RunRepository {
  return {
    ...makeRunGenerationStore(db, tables),
    ...makeRunReviewStore(db, tables),
    create: (run) => createRun(db, tables, run),
    get: (id) => getRun(db, tables, id),
    async getVisible(id) {
      const item = await getRunItem(db, tables, id);
      return item && item.pipelineDeletedAt === undefined ? toRun(item) : null;
    },
    hidePipelineRuns: (pipelineId, at) => hidePipelineRuns(db, tables, pipelineId, at),
    listStale: (status, createdBefore, limit) => listStale(db, tables, status, createdBefore, limit),
    listByPipeline: (pipelineId, page, filter = {}) => listByPipeline(db, tables, pipelineId, page, filter),
  };
}

async function createRun(db: DynamoDBDocumentClient, tables: RunTables, run: SynthesisRun): Promise<void> {
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
}

async function getRunItem(db: DynamoDBDocumentClient, tables: RunTables, id: string) {
  const { Item } = await db.send(new GetCommand({ TableName: tables.runs, Key: runKey(id) }));
  return Item;
}

async function getRun(
  db: DynamoDBDocumentClient,
  tables: RunTables,
  id: string,
): Promise<SynthesisRun | null> {
  const item = await getRunItem(db, tables, id);
  return item ? toRun(item) : null;
}

/** Marks every run of the pipeline hidden (getVisible then answers null), page after page; how many it hid. */
async function hidePipelineRuns(
  db: DynamoDBDocumentClient,
  tables: RunTables,
  pipelineId: string,
  at: string,
): Promise<number> {
  let hidden = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const page = await db.send(
      new QueryCommand({
        TableName: tables.runs,
        IndexName: RUN_INDEX,
        KeyConditionExpression: 'pipelineId = :id',
        ExpressionAttributeValues: { ':id': pipelineId },
        ProjectionExpression: 'id',
        ExclusiveStartKey: start,
      }),
    );
    const ids = (page.Items ?? []).map((item) => String(item.id));
    for (let from = 0; from < ids.length; from += HIDE_CONCURRENCY) {
      const marked = await Promise.all(
        ids.slice(from, from + HIDE_CONCURRENCY).map((id) => hideRun(db, tables, id, at)),
      );
      hidden += marked.filter(Boolean).length;
    }
    start = page.LastEvaluatedKey;
  } while (start);
  return hidden;
}

/** Marks one run hidden; false when the deletion job removed it meanwhile (it is hidden already). */
async function hideRun(
  db: DynamoDBDocumentClient,
  tables: RunTables,
  id: string,
  at: string,
): Promise<boolean> {
  try {
    await db.send(
      new UpdateCommand({
        TableName: tables.runs,
        Key: runKey(id),
        UpdateExpression: 'SET pipelineDeletedAt = :at',
        ConditionExpression: 'attribute_exists(id)',
        ExpressionAttributeValues: { ':at': at },
      }),
    );
    return true;
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    return false;
  }
}

async function listStale(
  db: DynamoDBDocumentClient,
  tables: RunTables,
  status: 'pending' | 'generating',
  createdBefore: string,
  limit: number,
): Promise<SynthesisRun[]> {
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
}

function listByPipeline(
  db: DynamoDBDocumentClient,
  tables: RunTables,
  pipelineId: string,
  page: PageRequest,
  filter: { status?: SynthesisRun['status'] | undefined },
): Promise<Page<SynthesisRun>> {
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
}
