/**
 * Which infrastructure errors may pass if the job is tried again: throttling, server errors,
 * timeouts and dropped connections (as the AWS SDK classifies them), and the Node network errors
 * under them. Anything else that no use case recognized is a bug or bad data: retrying it would
 * fail the same way and spend again, so it is permanent.
 */
import {
  isClockSkewError,
  isServerError,
  isThrottlingError,
  isTransientError,
} from '@smithy/service-error-classification';

const TRANSIENT_NODE_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ETIMEDOUT',
  'EPIPE',
  'EAI_AGAIN',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
]);
/** Cancellation reasons of a transaction that a later attempt may not meet. */
const TRANSIENT_CANCELLATIONS = new Set([
  'TransactionConflict',
  'ThrottlingError',
  'ProvisionedThroughputExceeded',
]);

export function isTransientFault(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const sdk = error as Error & {
    $metadata?: { httpStatusCode?: number };
    $retryable?: unknown;
    code?: unknown;
    CancellationReasons?: Array<{ Code?: string }>;
  };
  if (sdk.name === 'TransactionCanceledException') {
    return (sdk.CancellationReasons ?? []).some((reason) => TRANSIENT_CANCELLATIONS.has(reason.Code ?? ''));
  }
  if (typeof sdk.code === 'string' && TRANSIENT_NODE_CODES.has(sdk.code)) return true;
  if (sdk.name === 'TimeoutError' || sdk.name === 'AbortError') return true;
  if (sdk.$metadata !== undefined || sdk.$retryable !== undefined) {
    const classified = sdk as Parameters<typeof isTransientError>[0];
    return (
      isThrottlingError(classified) ||
      isTransientError(classified) ||
      isServerError(classified) ||
      isClockSkewError(classified)
    );
  }
  return false;
}
