/*
 * How DynamoDB says a condition failed: of a single write, of which items of a transaction, or that
 * an item grew over its 400 KB.
 */
import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';

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

/** DynamoDB refused an item over its 400 KB limit (alone, or as a transaction item). */
export function isItemTooLarge(error: unknown): boolean {
  const name = (error as Error)?.name;
  const message = String((error as Error)?.message ?? '');
  if (name === 'ValidationException') return /item size|size has exceeded/i.test(message);
  if (name !== 'TransactionCanceledException') return false;
  const reasons = (error as TransactionCanceledException).CancellationReasons ?? [];
  return reasons.some((reason) => reason.Code === 'ValidationError' && /size/i.test(reason.Message ?? ''));
}
