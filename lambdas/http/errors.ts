/*
 * Error → HTTP: an ApiError (the domain's error family) becomes its `{error, message}` body with
 * its status (a 401 with its RFC 6750 challenge); anything else is logged with its cause chain and
 * answered as a plain 500 that reveals nothing.
 */
import type { MiddlewareObj } from '@middy/core';
import { ApiError, type ErrorBody, INTERNAL_ERROR_BODY } from '../core/errors.ts';
import { logger } from '../observability/logger.ts';
import { cookieHeaderOf, parseCookieHeader } from './cookies.ts';
import { findHeader } from './headers.ts';
import { type HttpEvent, type HttpResult, json } from './response.ts';
import { REFRESH_COOKIE, SESSION_COOKIE } from './session-cookies.ts';

const TOKEN_COOKIES = [SESSION_COOKIE, REFRESH_COOKIE];

/** Whether the request carried a token: an Authorization header or a session cookie. */
function sentToken(event: HttpEvent | undefined): boolean {
  if (event === undefined) return false;
  if (findHeader(event.headers, 'authorization')?.trim()) return true;
  const cookies = parseCookieHeader(cookieHeaderOf(event.headers, event.multiValueHeaders));
  return TOKEN_COOKIES.some((name) => cookies.get(name));
}

/**
 * RFC 6750's challenge: the scheme, and `error="invalid_token"` when the request carried a token
 * that was refused (a request without one gets no error code, as the RFC asks).
 */
function bearerChallenge(event: HttpEvent | undefined): string {
  return sentToken(event) ? 'Bearer error="invalid_token"' : 'Bearer';
}

function retryAfterSeconds(error: ApiError): number | undefined {
  const value = (error as ApiError & { retryAfterSeconds?: unknown }).retryAfterSeconds;
  return typeof value === 'number' && value > 0 ? Math.ceil(value) : undefined;
}

/** The answer to `error`; `event`, when given, tells a 401's challenge whether a token was sent. */
export function errorResponse(error: unknown, event?: HttpEvent): HttpResult {
  if (!(error instanceof ApiError)) return json(500, INTERNAL_ERROR_BODY satisfies ErrorBody);
  const retryAfter = retryAfterSeconds(error);
  return json(error.statusCode, error.toJSON(), {
    ...(retryAfter === undefined ? {} : { 'retry-after': String(retryAfter) }),
    ...(error.statusCode === 401 ? { 'www-authenticate': bearerChallenge(event) } : {}),
  });
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
    request.response = errorResponse(error, request.event);
  },
});
