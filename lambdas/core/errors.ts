/**
 * The error family of the API. Each error carries its HTTP status and wire code; the one mapper in
 * platform/http turns any of them into `{error, message}`. Anything that is not an ApiError is an
 * internal error: logged, never echoed.
 */
export type ErrorCode =
  | 'VALIDATION_ERROR'
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'CONFLICT'
  | 'PAYLOAD_TOO_LARGE'
  | 'RATE_LIMITED'
  | 'INTERNAL_ERROR'
  | 'SERVICE_UNAVAILABLE';

export interface ErrorBody {
  error: ErrorCode;
  message: string;
  details?: unknown;
}

export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = new.target.name;
  }

  toJSON(): ErrorBody {
    return this.details === undefined
      ? { error: this.code, message: this.message }
      : { error: this.code, message: this.message, details: this.details };
  }
}

export class ValidationError extends ApiError {
  constructor(message: string, details?: unknown) {
    super(400, 'VALIDATION_ERROR', message, details);
  }
}
export class UnauthorizedError extends ApiError {
  constructor(message = 'The credential is missing, invalid, expired or revoked.') {
    super(401, 'UNAUTHORIZED', message);
  }
}
export class ForbiddenError extends ApiError {
  constructor(message = 'The credential has no permission for this resource.') {
    super(403, 'FORBIDDEN', message);
  }
}
export class NotFoundError extends ApiError {
  constructor(message: string) {
    super(404, 'NOT_FOUND', message);
  }
}
export class ConflictError extends ApiError {
  constructor(message: string) {
    super(409, 'CONFLICT', message);
  }
}
export class PayloadTooLargeError extends ApiError {
  constructor(message: string) {
    super(413, 'PAYLOAD_TOO_LARGE', message);
  }
}
export class RateLimitedError extends ApiError {
  constructor(message: string) {
    super(429, 'RATE_LIMITED', message);
  }
}
/** Refused by the per-team quota: 429 with Retry-After until the hour ends. */
export class QuotaExceededError extends RateLimitedError {
  constructor(
    limit: number,
    readonly retryAfterSeconds: number,
  ) {
    super(`Your team has started ${limit} synthesis runs this hour, its quota; retry after the hour ends.`);
  }
}

/** A dependency (queue, model, secret) is unavailable; the caller may retry. */
export class ServiceUnavailableError extends ApiError {
  constructor(message: string) {
    super(503, 'SERVICE_UNAVAILABLE', message);
  }
}

export const INTERNAL_ERROR_BODY: ErrorBody = {
  error: 'INTERNAL_ERROR',
  message: 'An internal error occurred.',
};

/* ---- generation faults (the worker's side; never an HTTP answer) ---- */

/** What a generation had already cost when it stopped, if it called a model. */
export interface SpentUsage {
  model: string;
  inputTokens: number;
  outputTokens: number;
  attempts: number;
  /** Set by the generation use case from the price table (core/model-pricing.ts). */
  costUsd?: number | null;
}

/**
 * A fault that no retry can fix (a refused or unparseable model reply, a missing key, a result too
 * large to store, a run or pipeline that is gone): the run fails now with this message, which is
 * shown to users, and nothing more is spent on it.
 */
export class SynthesisFailure extends Error {
  override name = 'SynthesisFailure';
  readonly usage: SpentUsage | undefined;

  constructor(message: string, options: { usage?: SpentUsage | undefined; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.usage = options.usage;
  }
}

/**
 * A fault that may pass (throttling, a 5xx or 529, a timeout, a lost race): the job is retried by
 * the queue after `retryAfterSeconds` (a backoff when absent). The message says why, for the run
 * and the log; `cause` keeps the original error.
 */
export class TransientSynthesisError extends Error {
  override name = 'TransientSynthesisError';
  readonly usage: SpentUsage | undefined;
  readonly retryAfterSeconds: number | undefined;

  constructor(
    message: string,
    options: { usage?: SpentUsage | undefined; cause?: unknown; retryAfterSeconds?: number } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.usage = options.usage;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}
