/*
 * Synthesis runs in the runs table, one item per run: the DynamoDB adapter of RunRepository, composed
 * of the worker's and the reviewer's stores, with the reads and the sweeper's query.
 */
import {
  BatchGetCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { ConflictError } from '../core/errors.ts';
import type { PageRequest } from '../core/ports/common.ts';
import type { RunRepository } from '../core/ports/runs.ts';
import { MAX_CHAIN_RUNS } from '../core/refinement.ts';
import type { Page } from '../core/schemas/common.ts';
import type { SynthesisRun } from '../core/schemas/runs.ts';
import { failedTransactionItems, isConditionFailure } from './conditions.ts';
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
/** On a chain's first run: the ids of its refinements, in the order they were created (internal). */
export const CHAIN_ATTRIBUTE = 'chainRunIds';

/** DynamoDB adapter of RunRepository; every status change is a conditional write. */
export function makeRunRepository(db: DynamoDBDocumentClient, tables: RunTables): RunRepository {
  return {
    ...makeRunGenerationStore(db, tables),
    ...makeRunReviewStore(db, tables),
    ...makeRunReads(db, tables),
    ...makeRunWrites(db, tables),
  };
}

/** A run by id (as stored, or as the API shows it), the sweeper's stale runs, a pipeline's runs. */
function makeRunReads(
  db: DynamoDBDocumentClient,
  tables: RunTables,
): Pick<RunRepository, 'get' | 'getVisible' | 'listStale' | 'listByPipeline' | 'listChain'> {
  const item = async (id: string) =>
    (await db.send(new GetCommand({ TableName: tables.runs, Key: runKey(id) }))).Item;
  const visible = (found: Record<string, unknown>) => found.pipelineDeletedAt === undefined;
  return {
    async listChain(rootRunId) {
      const root = await item(rootRunId);
      if (!root || !visible(root)) return [];
      const ids = Array.isArray(root[CHAIN_ATTRIBUTE]) ? root[CHAIN_ATTRIBUTE].map(String) : [];
      const found = new Map<string, Record<string, unknown>>();
      let keys = ids.map((id) => runKey(id));
      for (let round = 0; keys.length > 0 && round < 8; round++) {
        const { Responses, UnprocessedKeys } = await db.send(
          new BatchGetCommand({ RequestItems: { [tables.runs]: { Keys: keys } } }),
        );
        for (const run of Responses?.[tables.runs] ?? []) found.set(String(run.id), run);
        keys = (UnprocessedKeys?.[tables.runs]?.Keys ?? []) as typeof keys;
      }
      if (keys.length > 0) throw new Error('DynamoDB left runs of the chain unread; try again later.');
      const members = ids.flatMap((id) => {
        const run = found.get(id);
        return run && visible(run) ? [run] : [];
      });
      return [root, ...members].map(toRun);
    },

    async get(id) {
      const found = await item(id);
      return found ? toRun(found) : null;
    },

    async getVisible(id) {
      const found = await item(id);
      return found && found.pipelineDeletedAt === undefined ? toRun(found) : null;
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

/**
 * A refinement: the run, and its id appended to its chain's list on the first run, in one
 * transaction conditioned on the chain holding fewer than MAX_CHAIN_RUNS: a full chain is a 409.
 */
async function createInChain(
  db: DynamoDBDocumentClient,
  tables: Pick<RunTables, 'runs'>,
  run: SynthesisRun,
  rootRunId: string,
): Promise<void> {
  try {
    await db.send(
      new TransactWriteCommand({
        TransactItems: [
          { Put: { TableName: tables.runs, Item: run, ConditionExpression: 'attribute_not_exists(id)' } },
          {
            Update: {
              TableName: tables.runs,
              Key: runKey(rootRunId),
              UpdateExpression: `SET ${CHAIN_ATTRIBUTE} = list_append(if_not_exists(${CHAIN_ATTRIBUTE}, :none), :run)`,
              ConditionExpression: `attribute_exists(id) AND (attribute_not_exists(${CHAIN_ATTRIBUTE}) OR size(${CHAIN_ATTRIBUTE}) < :room)`,
              ExpressionAttributeValues: { ':none': [], ':run': [run.id], ':room': MAX_CHAIN_RUNS - 1 },
            },
          },
        ],
      }),
    );
  } catch (error) {
    const failed = failedTransactionItems(error);
    if (failed.includes(0)) throw new ConflictError(`A synthesis run with id ${run.id} already exists.`);
    if (failed.includes(1)) {
      throw new ConflictError(
        `The chain of run ${rootRunId} holds ${MAX_CHAIN_RUNS} runs, the most one chain may (or its first run is gone); start a new chain with a run without parentRunId.`,
      );
    }
    throw error;
  }
}

/** Creating a run, and hiding a deleted pipeline's runs (the deleting function needs only this part). */
export function makeRunWrites(
  db: DynamoDBDocumentClient,
  tables: Pick<RunTables, 'runs'>,
): Pick<RunRepository, 'create' | 'hidePipelineRuns'> {
  return {
    async create(run) {
      if (run.rootRunId) return createInChain(db, tables, run, run.rootRunId);
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

    async hidePipelineRuns(pipelineId, at) {
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
          await Promise.all(
            ids.slice(from, from + HIDE_CONCURRENCY).map((id) =>
              db
                .send(
                  new UpdateCommand({
                    TableName: tables.runs,
                    Key: runKey(id),
                    UpdateExpression: 'SET pipelineDeletedAt = :at',
                    ConditionExpression: 'attribute_exists(id)',
                    ExpressionAttributeValues: { ':at': at },
                  }),
                )
                .then(
                  () => {
                    hidden++;
                  },
                  (error: unknown) => {
                    // A run the deletion job removed meanwhile is hidden already.
                    if (!isConditionFailure(error)) throw error;
                  },
                ),
            ),
          );
        }
        start = page.LastEvaluatedKey;
      } while (start);
      return hidden;
    },
  };
}
