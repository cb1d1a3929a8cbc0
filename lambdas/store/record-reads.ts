/*
 * Reading a pipeline's executions and signals back (core/ports/record-reads.ts): bounded Queries
 * of their time-ordered partition, newest first, the window's lower bound in the key condition and
 * the filters applied by DynamoDB; a page's cursor is the last key read.
 */
import { type DynamoDBDocumentClient, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { RecordReads } from '../core/ports/record-reads.ts';
import { executionSchema, signalSchema } from '../core/schemas/records.ts';
import { decodeCursor, encodeCursor } from './cursor.ts';
import { itemReader } from './items.ts';
import { executionIdKey, executionKey, executionsPartition, signalsPartition } from './keys.ts';

/** The Queries one page makes at most: a filter that matches little ends the page early, with a cursor. */
const MAX_PAGES = 5;
/** The key of a range read: its partition and sort-key bounds (as a sharded store's RangeQuery). */
interface RangeRead {
  partition: string;
  from: string;
  to?: string | undefined;
}

type Filters = Record<string, string | undefined>;

async function readRange<T>(
  db: DynamoDBDocumentClient,
  tableName: string,
  range: RangeRead,
  filters: Filters,
  page: { limit: number; cursor?: string | undefined },
  parse: (item: unknown) => T,
) {
  const set = Object.entries(filters).filter((entry): entry is [string, string] => entry[1] !== undefined);
  let start = decodeCursor(page.cursor, {
    attributes: ['pk', 'sk'],
    partition: { name: 'pk', value: range.partition },
  });
  const items: T[] = [];
  for (let read = 0; read < MAX_PAGES && items.length < page.limit; read++) {
    const { Items = [], LastEvaluatedKey } = await db.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: range.to
          ? 'pk = :pk AND sk BETWEEN :from AND :to'
          : 'pk = :pk AND sk >= :from',
        ExpressionAttributeValues: {
          ':pk': range.partition,
          ':from': range.from,
          ...(range.to ? { ':to': range.to } : {}),
          ...Object.fromEntries(set.map(([name, value]) => [`:${name}`, value])),
        },
        ...(set.length > 0
          ? {
              FilterExpression: set.map(([name]) => `#${name} = :${name}`).join(' AND '),
              ExpressionAttributeNames: Object.fromEntries(set.map(([name]) => [`#${name}`, name])),
            }
          : {}),
        ScanIndexForward: false,
        Limit: page.limit - items.length,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    items.push(...Items.map(parse));
    start = LastEvaluatedKey as Record<string, string> | undefined;
    if (!start) break;
  }
  return { items, nextCursor: encodeCursor(start) };
}

export function makeRecordReads(db: DynamoDBDocumentClient, tableName: string): RecordReads {
  const execution = itemReader(executionSchema, 'execution');
  const signal = itemReader(signalSchema, 'signal');
  return {
    listExecutions: (pipelineId, { since, ...filters }, page) =>
      readRange(
        db,
        tableName,
        { partition: executionsPartition(pipelineId), from: since },
        filters,
        page,
        execution,
      ),
    listSignals: (pipelineId, { since, until, ...filters }, page) =>
      readRange(
        db,
        tableName,
        { partition: signalsPartition(pipelineId), from: since, to: until && `${until}~` },
        filters,
        page,
        signal,
      ),
    async getExecution(pipelineId, executionId, since) {
      const marker = await db.send(
        new GetCommand({ TableName: tableName, Key: executionIdKey(pipelineId, executionId) }),
      );
      const startedAt = marker.Item?.recordTime;
      if (typeof startedAt !== 'string' || startedAt < since) return null;
      const found = await db.send(
        new GetCommand({
          TableName: tableName,
          Key: executionKey({ pipelineId, startedAt, id: executionId }),
        }),
      );
      return found.Item ? execution(found.Item) : null;
    },
  };
}
