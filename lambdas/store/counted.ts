/*
 * Items kept under a cap (a team's webhooks, a pipeline's monitors): a counter item beside them,
 * raised with each creation and lowered with each deletion in the same transaction, so the cap
 * holds however many requests create at once.
 */
import { type DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { ValidationError } from '../core/errors.ts';
import { failedTransactionItems } from './conditions.ts';
import type { ItemKey } from './keys.ts';

/** The transaction item raising `attribute` of the counter at `key` by one, refused at `max`. */
export function countUp(tableName: string, key: ItemKey, attribute: string, max: number) {
  return {
    Update: {
      TableName: tableName,
      Key: key,
      UpdateExpression: 'SET #count = if_not_exists(#count, :zero) + :one',
      ConditionExpression: 'attribute_not_exists(#count) OR #count < :max',
      ExpressionAttributeNames: { '#count': attribute },
      ExpressionAttributeValues: { ':zero': 0, ':one': 1, ':max': max },
    },
  };
}

/** The transaction item lowering `attribute` of the counter at `key` by one (never below 0). */
export function countDown(tableName: string, key: ItemKey, attribute: string) {
  return {
    Update: {
      TableName: tableName,
      Key: key,
      UpdateExpression: 'SET #count = #count - :one',
      ConditionExpression: '#count > :zero',
      ExpressionAttributeNames: { '#count': attribute },
      ExpressionAttributeValues: { ':zero': 0, ':one': 1 },
    },
  };
}

/**
 * Sends a transaction whose first item is a counter's countUp (or, for a deletion, whose first
 * item must exist): when that first item's condition fails, the error `refusal` makes is thrown.
 */
export async function sendCounted(
  db: DynamoDBDocumentClient,
  items: Record<string, unknown>[],
  refusal: (cause: unknown) => Error,
): Promise<void> {
  try {
    await db.send(new TransactWriteCommand({ TransactItems: items }));
  } catch (error) {
    if (failedTransactionItems(error).includes(0)) throw refusal(error);
    throw error;
  }
}

/** The refusal of a creation past its cap: a 400 saying what to do. */
export const capReached = (words: string) => (cause: unknown) => new ValidationError(words, { cause });
