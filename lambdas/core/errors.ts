/**
 * The error family of the API. Each error carries its HTTP status and wire code; the one mapper in
 * http/ turns any of them into `{error, message}`. Anything that is not an ApiError is an
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

/** What every error of the family may carry besides its message. */
export interface ApiErrorOptions {
  /** With VALIDATION_ERROR: what is wrong, by path; sent in the body as `details`. */
  details?: unknown;
  /** The error this one stands for (a DynamoDB refusal, a parse failure); logged, never sent. */
  cause?: unknown;
}

export class ApiError extends Error {
  readonly details: unknown;

  constructor(
    readonly statusCode: number,
    readonly code: ErrorCode,
    message: string,
    options: ApiErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.details = options.details;
  }

  toJSON(): ErrorBody {
    return this.details === undefined
      ? { error: this.code, message: this.message }
      : { error: this.code, message: this.message, details: this.details };
  }
}

export class ValidationError extends ApiError {
  constructor(message: string, options?: ApiErrorOptions) {
    super(400, 'VALIDATION_ERROR', message, options);
  }
}
export class UnauthorizedError extends ApiError {
  constructor(
    message = 'The credential is missing, invalid, expired or revoked.',
    options?: ApiErrorOptions,
  ) {
    super(401, 'UNAUTHORIZED', message, options);
  }
}
export class ForbiddenError extends ApiError {
  constructor(message = 'The credential has no permission for this resource.', options?: ApiErrorOptions) {
    super(403, 'FORBIDDEN', message, options);
  }
}
export class NotFoundError extends ApiError {
  constructor(message: string, options?: ApiErrorOptions) {
    super(404, 'NOT_FOUND', message, options);
  }
}
export class ConflictError extends ApiError {
  constructor(message: string, options?: ApiErrorOptions) {
    super(409, 'CONFLICT', message, options);
  }
}
export class PayloadTooLargeError extends ApiError {
  constructor(message: string, options?: ApiErrorOptions) {
    super(413, 'PAYLOAD_TOO_LARGE', message, options);
  }
}
export class RateLimitedError extends ApiError {
  constructor(
    message: string,
    /** Seconds until a retry may succeed: the answer's Retry-After. */
    readonly retryAfterSeconds?: number,
    options?: ApiErrorOptions,
  ) {
    super(429, 'RATE_LIMITED', message, options);
  }
}
/** Refused by the per-team quota: 429 with Retry-After until the hour ends. */
export class QuotaExceededError extends RateLimitedError {
  constructor(limit: number, retryAfterSeconds: number) {
    super(
      `Your team has started ${limit} synthesis runs this hour, its quota; retry after the hour ends.`,
      retryAfterSeconds,
    );
  }
}

/** A dependency (queue, model, secret) is unavailable; the caller may retry after a few seconds. */
export class ServiceUnavailableError extends ApiError {
  readonly retryAfterSeconds = 5;

  constructor(message: string, options?: ApiErrorOptions) {
    super(503, 'SERVICE_UNAVAILABLE', message, options);
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
  /** Every input token, cache reads and writes included (the OpenTelemetry GenAI convention). */
  inputTokens: number;
  /** Of inputTokens, those read from the provider's prompt cache (priced at 0.1 × the input price). */
  cacheReadInputTokens?: number;
  /** Of inputTokens, those written to the prompt cache (priced at 1.25 × the input price). */
  cacheWriteInputTokens?: number;
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
