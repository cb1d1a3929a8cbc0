/*
 * A run's evaluation in DynamoDB: its set (one item, written once) and its results (one item per
 * case and arm) in the run's evaluation partition of the data table, and the summary stored on the
 * run item so that reading a run stays one GetItem (keys: store/keys.ts).
 */
import {
  BatchGetCommand,
  BatchWriteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/mini';
import { ConflictError } from '../core/errors.ts';
import type { ExecutionStub } from '../core/evaluation.ts';
import type { EvaluationStore, StoredEvaluationSet } from '../core/ports/evaluation.ts';
import { timestampSchema } from '../core/schemas/common.ts';
import { storedEvaluationResultSchema } from '../core/schemas/evaluation.ts';
import { executionSchema } from '../core/schemas/records.ts';
import { isConditionFailure } from './conditions.ts';
import { carryingEvent } from './events.ts';
import { itemReader } from './items.ts';
import { executionOldestKey } from './kept-keys.ts';
import { isEmptyRange } from './key-ranges.ts';
import {
  EVALUATION_RESULT_PREFIX,
  evaluationPartition,
  evaluationResultKey,
  evaluationSetKey,
  executionKey,
  executionsPartition,
  type ItemKey,
  RECORD_SOURCES,
  runKey,
} from './keys.ts';
import { newestAcross } from './shards.ts';

const WRITE_BATCH = 25;
/** Sorts after every execution key (each begins with its start, an ISO time). */
const PAST_EVERY_KEY = '~';
const READ_BATCH = 100;
const MAX_ROUNDS = 8;

/** How the executions are sampled: this many slices of the time range, this many read from each. */
export const SAMPLING = { slices: 10, perSlice: 100 } as const;

// Built in functions called once and marked pure, so a bundle that does not use them leaves them out.
const setSchema = /* @__PURE__ */ (() =>
  z.object({
    chosenAt: timestampSchema,
    cases: z.array(
      z.object({
        executionId: z.string(),
        reason: z.enum(['cited', 'failed', 'succeeded']),
        startedAt: z.string(),
        heldOut: z.optional(z.boolean()),
      }),
    ),
    rootRunId: z.optional(z.string()),
  }))();

const oldestSchema = /* @__PURE__ */ (() => z.object({ oldestStart: z.string() }))();

const stubSchema = /* @__PURE__ */ (() =>
  z.object({
    id: z.string(),
    status: z.enum(['succeeded', 'failed']),
    startedAt: z.string(),
  }))();

export interface EvaluationTables {
  runs: string;
  data: string;
}

const pause = (round: number) => new Promise((resolve) => setTimeout(resolve, 50 * 2 ** round));

/** DynamoDB adapter of EvaluationStore. */
export function makeEvaluationStore(db: DynamoDBDocumentClient, tables: EvaluationTables): EvaluationStore {
  return {
    ...makeEvaluationSets(db, tables),
    ...makeExecutionReads(db, tables),
    ...makeEvaluationResults(db, tables),
  };
}

/** A run's evaluation set, chosen once. */
function makeEvaluationSets(
  db: DynamoDBDocumentClient,
  tables: EvaluationTables,
): Pick<EvaluationStore, 'getSet' | 'saveSetOnce'> {
  const readSet = itemReader(setSchema, 'evaluation set');

  async function getSet(runId: string): Promise<StoredEvaluationSet | null> {
    const { Item } = await db.send(
      new GetCommand({ TableName: tables.data, Key: evaluationSetKey(runId), ConsistentRead: true }),
    );
    return Item ? readSet(Item) : null;
  }

  return {
    getSet,

    async saveSetOnce(runId, set) {
      try {
        await db.send(
          new PutCommand({
            TableName: tables.data,
            Item: { ...evaluationSetKey(runId), ...set },
            ConditionExpression: 'attribute_not_exists(pk)',
          }),
        );
        return set;
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
        const stored = await getSet(runId);
        if (!stored) throw error;
        return stored;
      }
    },
  };
}

/**
 * Where a pipeline's execution history since `since` starts (its oldest key, or a time), or null
 * when it has none; its newest is read with the last slice (sampleExecutions).
 */
function makeHistoryStart(db: DynamoDBDocumentClient, tables: EvaluationTables) {
  const readOldest = itemReader(oldestSchema, 'oldest start');

  /**
   * The oldest key of the pipeline's execution history since `since` (and before `before`), or null
   * when it has none: a Query a shard (Limit 1, the key only), the oldest of their answers.
   */
  async function queriedOldest(pipelineId: string, since: string, before?: string) {
    const range = before === undefined ? 'sk >= :since' : 'sk BETWEEN :since AND :before';
    const ends = await Promise.all(
      RECORD_SOURCES.map(async (shard) => {
        const { Items = [] } = await db.send(
          new QueryCommand({
            TableName: tables.data,
            KeyConditionExpression: `pk = :pk AND ${range}`,
            ExpressionAttributeValues: {
              ':pk': executionsPartition(pipelineId, shard),
              ':since': since,
              ...(before === undefined ? {} : { ':before': before }),
            },
            ProjectionExpression: 'sk',
            Limit: 1,
          }),
        );
        const sk = Items[0]?.sk;
        return typeof sk === 'string' ? sk : null;
      }),
    );
    return ends.filter((sk): sk is string => sk !== null).sort()[0] ?? null;
  }

  /**
   * Where the history since `since` starts: the oldest start kept with the recording (one GetItem,
   * store/kept-keys.ts executionOldestKey), or `since` when the kept start is older (the window
   * starts after the history does). An execution older than the kept start (recorded before it was
   * kept, in the legacy partition, or sent late with an old start) is found by bounded Queries that
   * read nothing when there is none. Nothing kept (no execution recorded since this version): the
   * Queries of the whole window.
   */
  return async (pipelineId: string, since: string): Promise<string | null> => {
    const { Item } = await db.send(
      new GetCommand({ TableName: tables.data, Key: executionOldestKey(pipelineId) }),
    );
    if (Item === undefined) return queriedOldest(pipelineId, since);
    const kept = readOldest(Item).oldestStart;
    if (kept <= since) return since;
    return (await queriedOldest(pipelineId, since, kept)) ?? kept;
  };
}

/** The executions a set's cases are chosen from (sampled over the history) and read back as. */
function makeExecutionReads(
  db: DynamoDBDocumentClient,
  tables: EvaluationTables,
): Pick<EvaluationStore, 'sampleExecutions' | 'loadExecutions'> {
  const readStub = itemReader(stubSchema, 'execution');
  const readExecution = itemReader(executionSchema, 'execution');
  const historyStart = makeHistoryStart(db, tables);

  function slice(
    pipelineId: string,
    from: string,
    to: string,
    narrow?: (newestKey: string) => string,
    rate?: number,
  ): Promise<ExecutionStub[]> {
    // A slice narrower than a millisecond ends (a bare time) before the oldest key it would start at.
    if (isEmptyRange(from, to)) return Promise.resolve([]);
    // The slice's newest perSlice across the shards, merged: no more items read than one partition's.
    const queries = RECORD_SOURCES.map((shard) => ({
      base: {
        TableName: tables.data,
        ExpressionAttributeValues: { ':pk': executionsPartition(pipelineId, shard) },
        ExpressionAttributeNames: { '#status': 'status' },
        ProjectionExpression: 'sk, id, #status, startedAt',
      },
      partition: 'pk = :pk',
      from,
      to,
    }));
    // Its items count more than its time (docs/scaling.md, "Merged reads").
    return newestAcross(db, queries, 'sk', SAMPLING.perSlice, readStub, {
      frugal: true,
      ...(narrow ? { narrow } : {}),
      ...(rate ? { rate } : {}),
    });
  }

  return {
    async sampleExecutions(pipelineId, since) {
      const oldest = await historyStart(pipelineId, since);
      if (oldest === null) return [];
      const start = Date.parse(oldest.split('#')[0] ?? '');
      const at = (slice: number, width: number) => new Date(start + slice * width).toISOString();
      // Sort keys are `<startedAt>#<id>`: a slice runs from its start time to just before the next.
      let earlier: Array<readonly [string, string]> = [];
      // The last slice first, newest first from the top: its first round reads the history's newest
      // execution, whose start cuts the time range into the slices (and starts this one).
      const last = await slice(pipelineId, oldest, PAST_EVERY_KEY, (newestKey) => {
        const width = (Date.parse(newestKey.split('#')[0] ?? '') - start) / SAMPLING.slices;
        earlier = Array.from({ length: SAMPLING.slices - 1 }, (_, index) => [
          index === 0 ? oldest : at(index, width),
          at(index + 1, width),
        ]);
        return at(SAMPLING.slices - 1, width);
      });
      // The newest slice's rate aims the others' first rounds (an older slice is most often sparser).
      const times = [last[0], last.at(-1)].map((stub) => Date.parse(stub?.startedAt ?? ''));
      const span = (times[0] ?? Number.NaN) - (times[1] ?? Number.NaN);
      const rate = span > 0 ? (last.length - 1) / span : undefined;
      const slices = await Promise.all(
        earlier.map(([from, to]) => slice(pipelineId, from, to, undefined, rate)),
      );
      return [...slices.flat(), ...last];
    },

    async loadExecutions(pipelineId, refs) {
      const keys = refs.map((ref) => executionKey({ pipelineId, startedAt: ref.startedAt, id: ref.id }));
      const found = await getAll(db, tables.data, keys, readExecution);
      // Recorded before the shards: in the legacy partition, read only for what the shards lack.
      const seen = new Set(found.map((execution) => execution.id));
      const legacy = refs
        .filter((ref) => !seen.has(ref.id))
        .map((ref) => ({ pk: executionsPartition(pipelineId, null), sk: `${ref.startedAt}#${ref.id}` }));
      return legacy.length === 0
        ? found
        : [...found, ...(await getAll(db, tables.data, legacy, readExecution))];
    },
  };
}

/** Executions by their keys, in BatchGetItem rounds (what DynamoDB leaves unprocessed is asked again). */
async function getAll<T>(
  db: DynamoDBDocumentClient,
  table: string,
  all: ItemKey[],
  readExecution: (item: unknown) => T,
): Promise<T[]> {
  const found: T[] = [];
  for (let at = 0; at < all.length; at += READ_BATCH) {
    let keys: Array<Record<string, unknown>> = all.slice(at, at + READ_BATCH).map((key) => ({ ...key }));
    for (let round = 0; keys.length > 0; round++) {
      if (round >= MAX_ROUNDS) throw new Error('DynamoDB left executions unread; try again later.');
      const { Responses, UnprocessedKeys } = await db.send(
        new BatchGetCommand({ RequestItems: { [table]: { Keys: keys } } }),
      );
      found.push(...(Responses?.[table] ?? []).map(readExecution));
      keys = (UnprocessedKeys?.[table]?.Keys ?? []) as typeof keys;
      if (keys.length > 0) await pause(round);
    }
  }
  return found;
}

/** A run's results (one item per case and arm) and the summary the run carries. */
function makeEvaluationResults(
  db: DynamoDBDocumentClient,
  tables: EvaluationTables,
): Pick<EvaluationStore, 'listResults' | 'recordResults'> {
  const readResult = itemReader(storedEvaluationResultSchema, 'evaluation result');
  return {
    listResults: (runId) => allResults(runId),

    async recordResults(runId, results, summarize, eventOf) {
      await putAll(
        db,
        tables.data,
        results.map((result) => ({
          ...evaluationResultKey(runId, result.executionId, result.arm),
          ...result,
        })),
      );
      // Every writer counts itself after its results are stored; only the writer holding the
      // highest count may store the summary, and it reads the results after every lower count's
      // results were written: the summary it writes sums them all, whatever the interleaving.
      const sequence = await claimSummary(runId);
      const stored = await allResults(runId);
      const summary = summarize(stored);
      // The summary is a change of the run alone: it carries synthesis_run.evaluated in the same
      // UpdateItem, and the runs table's stream relays it into the events table (store/events.ts).
      try {
        await db.send(
          new UpdateCommand(
            carryingEvent(
              {
                TableName: tables.runs,
                Key: runKey(runId),
                UpdateExpression: 'SET evaluation = :summary',
                ConditionExpression: 'evaluationSequence = :sequence AND #status = :generated',
                ExpressionAttributeNames: { '#status': 'status' },
                ExpressionAttributeValues: {
                  ':summary': summary,
                  ':sequence': sequence,
                  ':generated': 'generated',
                },
              },
              eventOf(sequence),
            ),
          ),
        );
      } catch (error) {
        // A later batch holds a higher count: its summary includes these results (and its event says so).
        if (!isConditionFailure(error)) throw error;
      }
      return summary;
    },
  };

  async function claimSummary(runId: string): Promise<number> {
    try {
      const { Attributes } = await db.send(
        new UpdateCommand({
          TableName: tables.runs,
          Key: runKey(runId),
          UpdateExpression: 'ADD evaluationSequence :one',
          ConditionExpression: '#status = :generated',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':one': 1, ':generated': 'generated' },
          ReturnValues: 'UPDATED_NEW',
        }),
      );
      return Number(Attributes?.evaluationSequence);
    } catch (error) {
      if (isConditionFailure(error)) {
        throw new ConflictError('The run is no longer generated; its evaluation can no longer change.', {
          cause: error,
        });
      }
      throw error;
    }
  }

  async function allResults(runId: string) {
    const results = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await db.send(
        new QueryCommand({
          TableName: tables.data,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
          ExpressionAttributeValues: {
            ':pk': evaluationPartition(runId),
            ':prefix': EVALUATION_RESULT_PREFIX,
          },
          ConsistentRead: true,
          ExclusiveStartKey: start,
        }),
      );
      results.push(...(page.Items ?? []).map(readResult));
      start = page.LastEvaluatedKey;
    } while (start);
    return results;
  }
}

/** Puts the items, 25 a batch, until DynamoDB has processed every one. */
async function putAll(db: DynamoDBDocumentClient, table: string, items: Array<Record<string, unknown>>) {
  for (let at = 0; at < items.length; at += WRITE_BATCH) {
    let requests = items.slice(at, at + WRITE_BATCH).map((Item) => ({ PutRequest: { Item } }));
    for (let round = 0; requests.length > 0; round++) {
      if (round >= MAX_ROUNDS)
        throw new Error('DynamoDB left evaluation results unwritten; try again later.');
      const { UnprocessedItems } = await db.send(
        new BatchWriteCommand({ RequestItems: { [table]: requests } }),
      );
      requests = (UnprocessedItems?.[table] ?? []) as typeof requests;
      if (requests.length > 0) await pause(round);
    }
  }
}
