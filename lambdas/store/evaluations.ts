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
import type { DomainEvent } from '../core/events.ts';
import type { EvaluationStore, StoredEvaluationSet } from '../core/ports/evaluation.ts';
import { timestampSchema } from '../core/schemas/common.ts';
import {
  type EvaluationSummary,
  type StoredEvaluationResult,
  storedEvaluationResultSchema,
} from '../core/schemas/evaluation.ts';
import { type Execution, executionSchema } from '../core/schemas/records.ts';
import { isConditionFailure } from './conditions.ts';
import { carryingEvent } from './events.ts';
import { itemReader } from './items.ts';
import {
  EVALUATION_RESULT_PREFIX,
  evaluationPartition,
  evaluationResultKey,
  evaluationSetKey,
  executionKey,
  executionsPartition,
  runKey,
} from './keys.ts';

const WRITE_BATCH = 25;
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
      }),
    ),
  }))();

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

/** What the store's functions share: the client, the tables and the readers. */
interface Evaluations {
  db: DynamoDBDocumentClient;
  tables: EvaluationTables;
  read: ReturnType<typeof evaluationReaders>;
}

function evaluationReaders() {
  return {
    set: itemReader(setSchema, 'evaluation set'),
    stub: itemReader(stubSchema, 'execution'),
    execution: itemReader(executionSchema, 'execution'),
    result: itemReader(storedEvaluationResultSchema, 'evaluation result'),
  };
}

/** DynamoDB adapter of EvaluationStore. */
export function makeEvaluationStore(db: DynamoDBDocumentClient, tables: EvaluationTables): EvaluationStore {
  const store: Evaluations = { db, tables, read: evaluationReaders() };
  return {
    getSet: (runId) => getSet(store, runId),
    listResults: (runId) => allResults(store, runId),
    saveSetOnce: (runId, set) => saveSetOnce(store, runId, set),
    sampleExecutions: (pipelineId, since) => sampleExecutions(store, pipelineId, since),
    loadExecutions: (pipelineId, refs) => loadExecutions(store, pipelineId, refs),
    recordResults: (runId, results, summarize, eventOf) =>
      recordResults(store, runId, results, { summarize, eventOf }),
  };
}

async function getSet({ db, tables, read }: Evaluations, runId: string): Promise<StoredEvaluationSet | null> {
  const { Item } = await db.send(
    new GetCommand({ TableName: tables.data, Key: evaluationSetKey(runId), ConsistentRead: true }),
  );
  return Item ? read.set(Item) : null;
}

async function saveSetOnce(store: Evaluations, runId: string, set: StoredEvaluationSet) {
  try {
    await store.db.send(
      new PutCommand({
        TableName: store.tables.data,
        Item: { ...evaluationSetKey(runId), ...set },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
    return set;
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    const stored = await getSet(store, runId);
    if (!stored) throw error;
    return stored;
  }
}

/**
 * One end of the pipeline's execution history since `since` (its sort key), or null when it has
 * none: an execution outside the retention window is never read.
 */
async function edge(
  { db, tables }: Evaluations,
  pipelineId: string,
  newest: boolean,
  since: string,
): Promise<string | null> {
  const { Items = [] } = await db.send(
    new QueryCommand({
      TableName: tables.data,
      KeyConditionExpression: 'pk = :pk AND sk >= :since',
      ExpressionAttributeValues: { ':pk': executionsPartition(pipelineId), ':since': since },
      ProjectionExpression: 'sk',
      ScanIndexForward: !newest,
      Limit: 1,
    }),
  );
  const sk = Items[0]?.sk;
  return typeof sk === 'string' ? sk : null;
}

async function slice(
  { db, tables, read }: Evaluations,
  pipelineId: string,
  from: string,
  to: string,
): Promise<ExecutionStub[]> {
  const { Items = [] } = await db.send(
    new QueryCommand({
      TableName: tables.data,
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
      ExpressionAttributeValues: { ':pk': executionsPartition(pipelineId), ':from': from, ':to': to },
      ExpressionAttributeNames: { '#status': 'status' },
      ProjectionExpression: 'id, #status, startedAt',
      Limit: SAMPLING.perSlice,
    }),
  );
  return Items.map(read.stub);
}

/** Executions spread over the history since `since`: SAMPLING.slices slices of its time range, a few of each. */
async function sampleExecutions(store: Evaluations, pipelineId: string, since: string) {
  const [oldest, newest] = await Promise.all([
    edge(store, pipelineId, false, since),
    edge(store, pipelineId, true, since),
  ]);
  if (oldest === null || newest === null) return [];
  const start = Date.parse(oldest.split('#')[0] ?? '');
  const end = Date.parse(newest.split('#')[0] ?? '');
  const width = (end - start) / SAMPLING.slices;
  // Sort keys are `<startedAt>#<id>`: a slice runs from its start time to just before the next.
  const bounds = Array.from({ length: SAMPLING.slices }, (_, index) => {
    const from = index === 0 ? oldest : new Date(start + index * width).toISOString();
    const to =
      index === SAMPLING.slices - 1 ? newest : `${new Date(start + (index + 1) * width).toISOString()}`;
    return [from, to] as const;
  });
  const slices = await Promise.all(bounds.map(([from, to]) => slice(store, pipelineId, from, to)));
  return slices.flat();
}

async function loadExecutions(
  { db, tables, read }: Evaluations,
  pipelineId: string,
  refs: Array<{ id: string; startedAt: string }>,
): Promise<Execution[]> {
  const found: Execution[] = [];
  for (let at = 0; at < refs.length; at += READ_BATCH) {
    let keys: Array<Record<string, unknown>> = refs
      .slice(at, at + READ_BATCH)
      .map((ref) => ({ ...executionKey({ pipelineId, startedAt: ref.startedAt, id: ref.id }) }));
    for (let round = 0; keys.length > 0; round++) {
      if (round >= MAX_ROUNDS) throw new Error('DynamoDB left executions unread; try again later.');
      const { Responses, UnprocessedKeys } = await db.send(
        new BatchGetCommand({ RequestItems: { [tables.data]: { Keys: keys } } }),
      );
      found.push(...(Responses?.[tables.data] ?? []).map(read.execution));
      keys = (UnprocessedKeys?.[tables.data]?.Keys ?? []) as typeof keys;
      if (keys.length > 0) await pause(round);
    }
  }
  return found;
}

/**
 * Stores the results, then the summary of every stored result on the run item, carrying its event.
 * Every writer counts itself after its results are stored; only the writer holding the highest
 * count may store the summary, and it reads the results after every lower count's results were
 * written: the summary it writes sums them all, whatever the interleaving.
 */
async function recordResults(
  store: Evaluations,
  runId: string,
  results: StoredEvaluationResult[],
  {
    summarize,
    eventOf,
  }: {
    summarize: (all: StoredEvaluationResult[]) => EvaluationSummary;
    eventOf: (sequence: number) => DomainEvent;
  },
): Promise<EvaluationSummary> {
  await writeResults(store, runId, results);
  const sequence = await claimSummary(store, runId);
  const summary = summarize(await allResults(store, runId));
  // The summary is a change of the run alone: it carries synthesis_run.evaluated in the same
  // UpdateItem, and the runs table's stream relays it into the events table (store/events.ts).
  try {
    await store.db.send(
      new UpdateCommand(
        carryingEvent(
          {
            TableName: store.tables.runs,
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
}

/** Puts the results, a batch of 25 at a time, until DynamoDB has processed every one. */
async function writeResults({ db, tables }: Evaluations, runId: string, results: StoredEvaluationResult[]) {
  const items = results.map((result) => ({
    ...evaluationResultKey(runId, result.executionId, result.arm),
    ...result,
  }));
  for (let at = 0; at < items.length; at += WRITE_BATCH) {
    let requests = items.slice(at, at + WRITE_BATCH).map((Item) => ({ PutRequest: { Item } }));
    for (let round = 0; requests.length > 0; round++) {
      if (round >= MAX_ROUNDS)
        throw new Error('DynamoDB left evaluation results unwritten; try again later.');
      const { UnprocessedItems } = await db.send(
        new BatchWriteCommand({ RequestItems: { [tables.data]: requests } }),
      );
      requests = (UnprocessedItems?.[tables.data] ?? []) as typeof requests;
      if (requests.length > 0) await pause(round);
    }
  }
}

/** Counts this writer on the run item; a run that is no longer generated is a ConflictError. */
async function claimSummary({ db, tables }: Evaluations, runId: string): Promise<number> {
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

async function allResults({ db, tables, read }: Evaluations, runId: string) {
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
    results.push(...(page.Items ?? []).map(read.result));
    start = page.LastEvaluatedKey;
  } while (start);
  return results;
}
