/*
 * The spans of OTLP traces staged under their trace (core/ports/traces.ts): one item per trace part
 * a request brought (its evaluation results from OTLP logs in items of their own), written again
 * unchanged when the request is retried, and the revision of an execution assembled from more of
 * its trace's spans.
 */
import { createHash } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import {
  BatchGetCommand,
  BatchWriteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  QueryCommand,
  TransactWriteCommand,
} from '@aws-sdk/lib-dynamodb';
import { expiryEpoch } from '../core/lifecycle.ts';
import type { EvaluationRecord } from '../core/otlp/logs.ts';
import { spanJson, type TraceSpan } from '../core/otlp/spans.ts';
import type { ReviseExecution, TracePart, TraceStaging } from '../core/ports/traces.ts';
import { executionDeltas } from '../core/rollouts/counters.ts';
import type { Execution } from '../core/schemas/records.ts';
import { isConditionFailure } from './conditions.ts';
import {
  executionIdKey,
  executionIndexKey,
  executionKey,
  executionsPartition,
  recordShard,
  rolloutCountsKey,
} from './keys.ts';
import { armOf, keepsMoments } from './rollout-moments.ts';
import { partialTraceKey, tracePartition } from './trace-keys.ts';

/** Largest JSON of spans one item holds (an item holds 400 KB with its keys). */
const PART_BYTES = 300_000;
const WRITE_BATCH = 25;
const READ_BATCH = 100;

/** A part's spans cut into items of at most PART_BYTES; a span larger than that alone is refused. */
export const chunksOf = (spans: readonly TraceSpan[]): string[][] => chunksOfText(spans.map(spanJson));

function chunksOfText(texts: readonly string[]): string[][] {
  const chunks: string[][] = [];
  let current: string[] = [];
  let bytes = 0;
  for (const text of texts) {
    const size = Buffer.byteLength(text);
    if (current.length > 0 && bytes + size > PART_BYTES) {
      chunks.push(current);
      current = [];
      bytes = 0;
    }
    current.push(text);
    bytes += size;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

export const MAX_SPAN_BYTES = PART_BYTES;

/** The staging of a pipeline's traces in the data table. */
export function makeTraceStaging(db: DynamoDBDocumentClient, tableName: string): TraceStaging {
  return {
    async stage(pipelineId, parts, expiresAt) {
      const items = parts.flatMap((part) => partItems(pipelineId, part, expiresAt));
      const batches: Record<string, unknown>[][] = [];
      for (let at = 0; at < items.length; at += WRITE_BATCH) batches.push(items.slice(at, at + WRITE_BATCH));
      await Promise.all(batches.map((batch) => writeAll(db, tableName, batch)));
    },
    async partial(pipelineId, traceIds) {
      const keys = traceIds.map((traceId) => partialTraceKey(pipelineId, traceId));
      const found = await readKeys(db, tableName, keys, 'trace marks');
      return new Set(found.map((sk) => sk.split('#')[0] as string));
    },
    async recorded(pipelineId, traceIds) {
      // The marker in the shard the id names, the one a recording claims (store/records.ts).
      const keys = traceIds.map((id) => executionIdKey(pipelineId, id));
      return new Set(await readKeys(db, tableName, keys, 'execution id markers'));
    },
    async stagedOf(pipelineId, traceId) {
      const spans = new Map<string, TraceSpan>();
      const records = new Map<string, EvaluationRecord>();
      let start: Record<string, unknown> | undefined;
      do {
        const page = await db.send(
          new QueryCommand({
            TableName: tableName,
            KeyConditionExpression: 'pk = :pk AND begins_with(sk, :trace)',
            ExpressionAttributeValues: {
              ':pk': tracePartition(pipelineId, traceId),
              ':trace': `${traceId}#`,
            },
            ProjectionExpression: 'spans, spansGzip, recordsGzip',
            ...(start ? { ExclusiveStartKey: start } : {}),
          }),
        );
        for (const item of page.Items ?? []) {
          for (const text of spansText(item).split('\n')) {
            if (text === '') continue;
            const span = JSON.parse(text) as TraceSpan;
            spans.set(span.spanId, span);
          }
          for (const text of recordsText(item).split('\n')) {
            if (text === '') continue;
            const evaluation = JSON.parse(text) as EvaluationRecord;
            records.set(evaluation.id, evaluation);
          }
        }
        start = page.LastEvaluatedKey;
      } while (start);
      return { spans: [...spans.values()], records: [...records.values()] };
    },
  };
}

/** The sort keys of those of `keys` that exist, read consistently in batches of 100 at once. */
async function readKeys(
  db: DynamoDBDocumentClient,
  tableName: string,
  keys: ReadonlyArray<{ pk: string; sk: string }>,
  what: string,
): Promise<string[]> {
  const batches: Array<Array<{ pk: string; sk: string }>> = [];
  for (let at = 0; at < keys.length; at += READ_BATCH) batches.push(keys.slice(at, at + READ_BATCH));
  const read = async (batch: Array<{ pk: string; sk: string }>) => {
    const found: string[] = [];
    let unread: typeof batch = batch;
    for (let attempt = 0; unread.length > 0; attempt++) {
      if (attempt > 5) throw new Error(`DynamoDB left ${what} unread after 5 attempts.`);
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 50 * 2 ** attempt));
      const { Responses, UnprocessedKeys } = await db.send(
        new BatchGetCommand({
          RequestItems: { [tableName]: { Keys: unread, ConsistentRead: true, ProjectionExpression: 'sk' } },
        }),
      );
      for (const item of Responses?.[tableName] ?? []) found.push(String(item.sk));
      unread = (UnprocessedKeys?.[tableName]?.Keys ?? []) as typeof unread;
    }
    return found;
  };
  return (await Promise.all(batches.map(read))).flat();
}

const digestOf = (ids: string[]) =>
  createHash('sha256').update(ids.sort().join(',')).digest('base64url').slice(0, 16);

function partItems(pipelineId: string, part: TracePart, expiresAt: Date): Record<string, unknown>[] {
  const digest = digestOf(part.spans.map((span) => span.spanId));
  const expiresAtEpoch = Math.ceil(expiresAt.getTime() / 1000);
  const records = part.records ?? [];
  return [
    // Evaluation results (a few hundred bytes each, bounded by a request's 2,000 signals): one item
    // per 300 KB of them, under a key of their ids, so a retried request writes the same items.
    ...chunksOfText(records.map((one) => JSON.stringify(one))).map((chunk, index) => ({
      pk: tracePartition(pipelineId, part.traceId),
      sk: `${part.traceId}#R${digestOf(records.map((one) => one.id))}#${index}`,
      recordsGzip: gzipSync(chunk.join('\n'), { level: 1 }),
      expiresAtEpoch,
    })),
    ...chunksOf(part.spans).map((chunk, index) => ({
      pk: tracePartition(pipelineId, part.traceId),
      sk: `${part.traceId}#${digest}#${index}`,
      // Gzip: an item of a few spans' JSON weighs about a quarter (write units, staged bytes).
      spansGzip: gzipSync(chunk.join('\n'), { level: 1 }),
      expiresAtEpoch,
    })),
    ...(part.whole ? [] : [{ ...partialTraceKey(pipelineId, part.traceId), expiresAtEpoch }]),
  ];
}

/** A staged item's evaluation results, one JSON a line. */
function recordsText(item: Record<string, unknown>): string {
  const packed = item.recordsGzip;
  return packed instanceof Uint8Array ? gunzipSync(packed).toString('utf8') : '';
}

/** A staged item's spans, one JSON a line: gzip, or text as items staged before were written. */
function spansText(item: Record<string, unknown>): string {
  const packed = item.spansGzip;
  return packed instanceof Uint8Array ? gunzipSync(packed).toString('utf8') : String(item.spans ?? '');
}

/** Writes the items, sending again what DynamoDB leaves unprocessed (throttled) a few times. */
async function writeAll(db: DynamoDBDocumentClient, tableName: string, items: Record<string, unknown>[]) {
  let requests = items.map((Item) => ({ PutRequest: { Item } }));
  for (let attempt = 0; requests.length > 0; attempt++) {
    if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 50 * 2 ** attempt));
    if (attempt > 5) throw new Error('DynamoDB left span writes unprocessed after 5 attempts.');
    const { UnprocessedItems } = await db.send(
      new BatchWriteCommand({ RequestItems: { [tableName]: requests } }),
    );
    requests = (UnprocessedItems?.[tableName] ?? []).flatMap((request) =>
      request.PutRequest?.Item ? [{ PutRequest: { Item: request.PutRequest.Item } }] : [],
    );
  }
}

type CountedRollout = Parameters<ReviseExecution>[2];
type Arm = 'base' | 'candidate';

/** The rollout counts' fields an execution adds to (its arm, and its arm's failures when failed). */
function countedAs(execution: Record<string, unknown>, rollout: NonNullable<CountedRollout>) {
  const arm: Arm | null =
    execution.configurationId === rollout.candidateConfigurationId
      ? 'candidate'
      : execution.configurationId === rollout.baseConfigurationId
        ? 'base'
        : null;
  return arm === null ? [] : execution.status === 'failed' ? [arm, `${arm}Failed`] : [arm];
}

/**
 * The correction of the rollout's exact counts (store/records.ts counts them as a batch is
 * recorded) when a revision changes what was counted: one off the old arm and status, one onto
 * the new, on the execution's own shard of the counts (the effect sums the shards). Nothing when
 * the execution was recorded before the rollout (never counted in it) or nothing counted changes.
 */
function countsCorrection(
  tableName: string,
  old: Record<string, unknown>,
  revised: Execution,
  recordedAt: string,
  rollout: CountedRollout,
  step: number,
) {
  if (rollout === null || recordedAt < rollout.startedAt) return [];
  const delta = new Map<string, number>();
  for (const field of countedAs(old, rollout)) delta.set(field, (delta.get(field) ?? 0) - 1);
  for (const field of countedAs(revised, rollout)) delta.set(field, (delta.get(field) ?? 0) + 1);
  // The guarded metrics' moments follow too, at the step the execution was counted in.
  if (keepsMoments(rollout)) {
    const oldArm = armOf(old as Execution, rollout);
    const newArm = armOf(revised, rollout);
    if (oldArm) executionDeltas(old as Execution, oldArm, step, -1, delta);
    if (newArm) executionDeltas(revised, newArm, step, 1, delta);
  }
  const changed = [...delta].filter(([, by]) => by !== 0);
  if (changed.length === 0) return [];
  return [
    {
      Update: {
        TableName: tableName,
        Key: rolloutCountsKey(revised.pipelineId, rollout.id, recordShard(revised.id)),
        // `base` is a reserved word of DynamoDB's expressions: every field goes by a name.
        UpdateExpression: `ADD ${changed.map((_, i) => `#c${i} :c${i}`).join(', ')}`,
        ExpressionAttributeNames: Object.fromEntries(changed.map(([field], i) => [`#c${i}`, field])),
        ExpressionAttributeValues: Object.fromEntries(changed.map(([, by], i) => [`:c${i}`, by])),
      },
    },
  ];
}

/** The execution's id marker and its stored time, in its shard or else the legacy partition. */
async function markerOf(db: DynamoDBDocumentClient, tableName: string, pipelineId: string, id: string) {
  for (const legacy of [false, true]) {
    const marker = await db.send(
      new GetCommand({ TableName: tableName, Key: executionIdKey(pipelineId, id, legacy) }),
    );
    const recordTime = marker.Item?.recordTime;
    const counted = { countedIn: marker.Item?.countedIn, arm: marker.Item?.arm, step: marker.Item?.step };
    if (typeof recordTime === 'string') return { recordTime, legacy, counted };
  }
  return null;
}

/**
 * Replaces an execution assembled from a trace when `spanCount` is higher than the stored one's:
 * its place in the configuration index keeps its first recording time (an effect that already
 * read it does not count it again), a changed start (or one stored before the shards) moves it,
 * marker included, and the rollout's counts follow a changed arm or status, all atomically.
 */
export function makeReviseExecution(db: DynamoDBDocumentClient, tableName: string): ReviseExecution {
  return async (execution, retentionDays, rollout) => {
    const marker = await markerOf(db, tableName, execution.pipelineId, execution.id);
    if (marker === null) return 'kept';
    const { recordTime, legacy, counted } = marker;
    const oldKey = {
      pk: executionsPartition(execution.pipelineId, legacy ? null : recordShard(execution.id)),
      sk: `${recordTime}#${execution.id}`,
    };
    const old = await db.send(new GetCommand({ TableName: tableName, Key: oldKey, ConsistentRead: true }));
    if (!old.Item) return 'kept';
    if (typeof old.Item.spanCount !== 'number' || old.Item.source !== 'otlp') return 'foreign';
    if (old.Item.spanCount >= execution.spanCount) return 'kept';
    const recordedAt = String(old.Item.gsi2sk ?? '').slice(0, -(execution.id.length + 1));
    const ttl = { expiresAtEpoch: expiryEpoch(execution.startedAt, retentionDays) };
    const item = {
      ...executionKey(execution),
      ...executionIndexKey(execution, recordedAt),
      ...(execution satisfies Execution),
      ...ttl,
    };
    const condition = {
      ConditionExpression: 'spanCount = :seen',
      ExpressionAttributeValues: { ':seen': old.Item.spanCount },
    };
    const moved = legacy || execution.startedAt !== recordTime;
    const marked = {
      ...executionIdKey(execution.pipelineId, execution.id),
      recordTime: execution.startedAt,
      ...ttl,
      ...Object.fromEntries(Object.entries(counted).filter(([, value]) => value !== undefined)),
    };
    try {
      await db.send(
        new TransactWriteCommand({
          TransactItems: [
            moved
              ? { Delete: { TableName: tableName, Key: oldKey, ...condition } }
              : { Put: { TableName: tableName, Item: item, ...condition } },
            ...(moved
              ? [
                  { Put: { TableName: tableName, Item: item } },
                  { Put: { TableName: tableName, Item: marked } },
                ]
              : []),
            ...countsCorrection(
              tableName,
              old.Item,
              execution,
              recordedAt,
              rollout,
              typeof counted.step === 'number' ? counted.step : (rollout?.step ?? 0),
            ),
          ],
        }),
      );
      return 'revised';
    } catch (error) {
      if (isConditionFailure(error) || (error as { name?: string }).name === 'TransactionCanceledException') {
        return 'kept';
      }
      throw error;
    }
  };
}
