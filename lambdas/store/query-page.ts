/*
 * One page of one partition (of a table or an index), newest first, with its cursor: how every
 * list endpoint reads DynamoDB; the newest items of a query up to a bound; and every page of a
 * query, for the writes that must reach all of a user's records.
 */
import { type DynamoDBDocumentClient, QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import type { PageRequest } from '../core/ports/common.ts';
import type { Page } from '../core/schemas/common.ts';
import { decodeCursor, encodeCursor } from './cursor.ts';

export interface PageQuery {
  tableName: string;
  indexName?: string;
  /** The partition key attribute of the table or index, and the partition to read. */
  partition: { name: string; value: string };
  /** Only sort keys that start with this (the table's `sk`). */
  sortKeyPrefix?: string;
  /** The attributes of a LastEvaluatedKey here: a cursor must carry exactly these. */
  cursorAttributes: readonly string[];
  /** Applied after Limit, so a page may hold fewer items while nextCursor goes on. */
  filter?: { expression: string; names: Record<string, string>; values: Record<string, unknown> };
}

/** One page of one partition, newest (highest sort key) first, with an opaque, checked cursor. */
export async function queryPage<T>(
  db: DynamoDBDocumentClient,
  query: PageQuery,
  page: PageRequest,
  parse: (item: Record<string, unknown>) => T,
): Promise<Page<T>> {
  const startKey = decodeCursor(page.cursor, {
    attributes: query.cursorAttributes,
    partition: query.partition,
  });
  const { Items = [], LastEvaluatedKey } = await db.send(
    new QueryCommand({
      TableName: query.tableName,
      IndexName: query.indexName,
      KeyConditionExpression: query.sortKeyPrefix ? '#pk = :pk AND begins_with(sk, :prefix)' : '#pk = :pk',
      ExpressionAttributeNames: { '#pk': query.partition.name, ...query.filter?.names },
      ExpressionAttributeValues: {
        ':pk': query.partition.value,
        ...(query.sortKeyPrefix ? { ':prefix': query.sortKeyPrefix } : {}),
        ...query.filter?.values,
      },
      ...(query.filter ? { FilterExpression: query.filter.expression } : {}),
      ScanIndexForward: false,
      Limit: page.limit,
      ExclusiveStartKey: startKey,
    }),
  );
  return { items: Items.map(parse), nextCursor: encodeCursor(LastEvaluatedKey) };
}

/**
 * Every item a Query finds, page after page: for a change that must reach all of them (ending all
 * of a user's sessions, revoking all of their tokens), never for an answer to a request's reader.
 */
export async function queryAll<T>(
  db: DynamoDBDocumentClient,
  query: Omit<QueryCommandInput, 'ExclusiveStartKey'>,
  read: (item: unknown) => T,
): Promise<T[]> {
  const found: T[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await db.send(new QueryCommand({ ...query, ExclusiveStartKey: startKey }));
    found.push(...(page.Items ?? []).map(read));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return found;
}

/** The most pages one bounded read follows: an effect arm or signal window stops there whatever the history. */
export const MAX_QUERY_PAGES = 20;

/** Up to `limit` items of one Query, newest first, following pages (a page holds at most 1 MB). */
export async function queryNewest<T>(
  db: DynamoDBDocumentClient,
  input: QueryCommandInput,
  limit: number,
  parse: (item: Record<string, unknown>) => T,
): Promise<T[]> {
  const items: T[] = [];
  let start: Record<string, unknown> | undefined;
  for (let page = 0; page < MAX_QUERY_PAGES && items.length < limit; page++) {
    const { Items = [], LastEvaluatedKey } = await db.send(
      new QueryCommand({
        ...input,
        ScanIndexForward: false,
        Limit: limit - items.length,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    items.push(...Items.map(parse));
    if (!LastEvaluatedKey) break;
    start = LastEvaluatedKey;
  }
  return items;
}
