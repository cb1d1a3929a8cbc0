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
