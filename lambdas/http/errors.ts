/*
 * Error → HTTP: an ApiError (the domain's error family) becomes its `{error, message}` body with
 * its status; anything else is logged with its cause chain and answered as a plain 500 that
 * reveals nothing.
 */
import type { MiddlewareObj } from '@middy/core';
import { ApiError, type ErrorBody, INTERNAL_ERROR_BODY } from '../core/errors.ts';
import { logger } from '../observability/logger.ts';
import { type HttpEvent, type HttpResult, json } from './response.ts';

function retryAfterSeconds(error: ApiError): number | undefined {
  const value = (error as ApiError & { retryAfterSeconds?: unknown }).retryAfterSeconds;
  return typeof value === 'number' && value > 0 ? Math.ceil(value) : undefined;
}

export function errorResponse(error: unknown): HttpResult {
  if (!(error instanceof ApiError)) return json(500, INTERNAL_ERROR_BODY satisfies ErrorBody);
  const retryAfter = retryAfterSeconds(error);
  return json(
    error.statusCode,
    error.toJSON(),
    retryAfter === undefined ? {} : { 'retry-after': String(retryAfter) },
  );
}

/** What a log line says of an error: its words, its class as a field of its own, and its cause. */
export function describeError(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { errorMessage: String(error) };
  return {
    errorClass: error.name,
    errorMessage: error.message,
    ...(error.cause instanceof Error
      ? { cause: { errorClass: error.cause.name, errorMessage: error.cause.message } }
      : {}),
  };
}

/**
 * The last middleware: client errors become their body; a 5xx ApiError or anything else is
 * logged once, with its cause; a 4xx is logged at info with its status and code.
 */
export const errorMapper = (): MiddlewareObj<HttpEvent, HttpResult> => ({
  onError: async (request) => {
    const { error } = request;
    if (error instanceof ApiError && error.statusCode < 500) {
      logger.info('request refused', { status: error.statusCode, code: error.code });
    } else if (error instanceof ApiError) {
      logger.error('request failed', { status: error.statusCode, code: error.code, ...describeError(error) });
    } else {
      logger.error('unhandled error', { error: error as Error });
    }
    request.response = errorResponse(error);
  },
});
