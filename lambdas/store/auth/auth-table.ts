/*
 * What the auth table's stores share: a strongly consistent read of one item, parsed, and the
 * epoch seconds that DynamoDB TTL reads from `expiresAtEpoch`.
 */
import { type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import type * as z from 'zod/mini';
import { parseItem } from '../items.ts';
import type { ItemKey } from '../keys.ts';

/** The auth table and its client, as every auth store is given them. */
export interface AuthTable {
  db: DynamoDBDocumentClient;
  tableName: string;
  /** The events table: creating and revoking API tokens write their events there. */
  eventsTable?: string | undefined;
}

/** The events table, which the token changes write their events to. */
export function eventsTableOf(table: AuthTable): string {
  if (!table.eventsTable) throw new Error('The auth repository was built without the events table.');
  return table.eventsTable;
}

/**
 * One item, or null. Strongly consistent: a revocation written a moment ago must be seen by the
 * next check.
 */
export async function getItem<T>(
  { db, tableName }: AuthTable,
  key: ItemKey,
  schema: z.ZodMiniType<T>,
  what: string,
): Promise<T | null> {
  const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: key, ConsistentRead: true }));
  return Item ? parseItem(schema, Item, what) : null;
}

/**
 * DynamoDB TTL time of `iso` + `extraMs`. TTL deletes lazily (up to days late), so every reader
 * also compares the item's own expiry with the clock.
 */
export function epochSeconds(iso: string, extraMs = 0): number {
  return Math.ceil((Date.parse(iso) + extraMs) / 1000);
}
