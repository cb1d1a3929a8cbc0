/*
 * Conditional writes: the transaction item that only creates, and how DynamoDB says a condition
 * failed (of a single write, of which items of a transaction) or that an item grew over 400 KB.
 */
import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { PayloadTooLargeError } from '../core/errors.ts';

export function isConditionFailure(error: unknown): boolean {
  return (
    error instanceof ConditionalCheckFailedException ||
    (error as Error)?.name === 'ConditionalCheckFailedException'
  );
}

/** The indexes of the transaction items whose condition failed (empty for other cancellations). */
export function failedTransactionItems(error: unknown): number[] {
  if (
    !(error instanceof TransactionCanceledException) &&
    (error as Error)?.name !== 'TransactionCanceledException'
  ) {
    return [];
  }
  const reasons = (error as TransactionCanceledException).CancellationReasons ?? [];
  return reasons.flatMap((reason, index) => (reason.Code === 'ConditionalCheckFailed' ? [index] : []));
}

/**
 * The indexes of the transaction items another transaction was writing at the same moment
 * (DynamoDB cancels one of two transactions on one item rather than wait).
 */
export function contendedTransactionItems(error: unknown): number[] {
  if ((error as Error)?.name !== 'TransactionCanceledException') return [];
  const reasons = (error as TransactionCanceledException).CancellationReasons ?? [];
  return reasons.flatMap((reason, index) => (reason.Code === 'TransactionConflict' ? [index] : []));
}

/** DynamoDB refused an item over its 400 KB limit (alone, or as a transaction item). */
export function isItemTooLarge(error: unknown): boolean {
  const name = (error as Error)?.name;
  const message = String((error as Error)?.message ?? '');
  if (name === 'ValidationException') return /item size|size has exceeded/i.test(message);
  if (name !== 'TransactionCanceledException') return false;
  const reasons = (error as TransactionCanceledException).CancellationReasons ?? [];
  return reasons.some((reason) => reason.Code === 'ValidationError' && /size/i.test(reason.Message ?? ''));
}

/** What a person is told when a record they sent cannot fit one DynamoDB item. */
export const RECORD_TOO_LARGE =
  "The record would exceed DynamoDB's 400 KB item limit: send fewer or smaller slots or settings.";

/**
 * Runs a write whose items come from a request: DynamoDB's refusal of an item over 400 KB becomes
 * the domain's PayloadTooLargeError (413), keeping DynamoDB's error as its cause.
 */
export async function refusingTooLarge<T>(write: () => Promise<T>, message = RECORD_TOO_LARGE): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (isItemTooLarge(error)) throw new PayloadTooLargeError(message, { cause: error });
    throw error;
  }
}

/** A transaction item that only creates (pk/sk tables): an item with the same key fails the transaction. */
export function putNew(tableName: string, item: Record<string, unknown>) {
  return { Put: { TableName: tableName, Item: item, ConditionExpression: 'attribute_not_exists(pk)' } };
}
