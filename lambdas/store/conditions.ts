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

export function isTransactionConflict(error: unknown): boolean {
  return (
    (error as Error)?.name === 'TransactionCanceledException' && failedTransactionItems(error).length === 0
  );
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
