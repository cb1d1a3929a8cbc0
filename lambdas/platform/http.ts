/*
 * The HTTP plumbing every API handler shares: middy middleware, JSON and error responses,
 * body parsing and guards, path and query parameters, and the caller from the authorizer.
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy, { type MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import * as z from 'zod/mini';
import {
  ApiError,
  type ErrorBody,
  INTERNAL_ERROR_BODY,
  NotFoundError,
  PayloadTooLargeError,
  UnauthorizedError,
  ValidationError,
} from '../core/errors.ts';
import { type Principal, principalSchema } from '../core/principal.ts';
import { LIMITS } from '../core/schemas.ts';
import '../core/zod-locale.ts';
import { isItemTooLarge } from '../store/conditions.ts';
import { findHeader } from './headers.ts';
import { assertStorableJson } from './json-guard.ts';
import { logger } from './logger.ts';

export type HttpEvent = APIGatewayProxyEvent;
export type HttpResult = APIGatewayProxyResult;

const BASE_HEADERS = {
  'content-type': 'application/json',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
};

export function json(statusCode: number, body: unknown, headers: Record<string, string> = {}): HttpResult {
  return { statusCode, headers: { ...BASE_HEADERS, ...headers }, body: JSON.stringify(body) };
}

/** A response without a body (204). */
export function noContent(headers: Record<string, string> = {}): HttpResult {
  const { 'content-type': _contentType, ...base } = BASE_HEADERS;
  return { statusCode: 204, headers: { ...base, ...headers }, body: '' };
}

/**
 * Adds Set-Cookie headers. They go in `multiValueHeaders`, the only way a Lambda proxy response
 * can carry the same header more than once.
 */
export function withCookies(result: HttpResult, cookies: readonly string[]): HttpResult {
  if (cookies.length === 0) return result;
  return { ...result, multiValueHeaders: { ...result.multiValueHeaders, 'set-cookie': [...cookies] } };
}

function retryAfterSeconds(error: ApiError): number | undefined {
  if (error.statusCode === 503) return 5;
  // A 429 may say when to come back (auth/login.ts TooManyAttemptsError).
  const value = (error as ApiError & { retryAfterSeconds?: unknown }).retryAfterSeconds;
  return typeof value === 'number' && value > 0 ? Math.ceil(value) : undefined;
}

export function errorResponse(error: unknown): HttpResult {
  if (error instanceof ApiError) {
    const retryAfter = retryAfterSeconds(error);
    const headers: Record<string, string> =
      retryAfter === undefined ? {} : { 'retry-after': String(retryAfter) };
    return json(error.statusCode, error.toJSON(), headers);
  }
  // Schemas bound each field; a record can still outgrow an item in sum.
  if (isItemTooLarge(error)) {
    return errorResponse(
      new PayloadTooLargeError(
        "The record would exceed DynamoDB's 400 KB item limit: send fewer or smaller slots or settings.",
      ),
    );
  }
  return json(500, INTERNAL_ERROR_BODY satisfies ErrorBody);
}

/**
 * The last middleware: client errors (ApiError) become their `{error, message}` body; anything
 * else is logged with its stack and answered as a plain 500 that reveals nothing.
 */
const errorMapper = (): MiddlewareObj<HttpEvent, HttpResult> => ({
  onError: async (request) => {
    const { error } = request;
    if (error instanceof ApiError) {
      if (error.statusCode >= 500)
        logger.error('request failed', { code: error.code, message: error.message });
      else logger.info('request refused', { status: error.statusCode, code: error.code });
    } else if (isItemTooLarge(error)) {
      logger.info('request refused', { status: 413, code: 'PAYLOAD_TOO_LARGE' });
    } else {
      logger.error('unhandled error', { error: error as Error });
    }
    request.response = errorResponse(error);
  },
});

/** Wraps a use-case-calling function into a Lambda handler with the shared middleware. */
export function httpHandler(fn: (event: HttpEvent, context: Context) => Promise<HttpResult>) {
  return middy<HttpEvent, HttpResult>()
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(errorMapper())
    .handler(fn);
}

/** The caller as established by the authorizer; a request without one never reached a handler on AWS. */
export function principalOf(event: HttpEvent): Principal {
  const parsed = principalSchema.safeParse(event.requestContext?.authorizer ?? {});
  if (!parsed.success) throw new UnauthorizedError();
  return parsed.data;
}

function zodDetails(error: z.core.$ZodError) {
  return error.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message }));
}

/** Parses and validates a JSON body; an absent body is treated as `{}` when `optional`. */
export function parseBody<S extends z.core.$ZodType>(
  event: HttpEvent,
  schema: S,
  options: { optional?: boolean } = {},
): z.infer<S> {
  const raw = event.body ?? '';
  const text = event.isBase64Encoded ? Buffer.from(raw, 'base64').toString('utf8') : raw;
  if (Buffer.byteLength(text, 'utf8') > LIMITS.bodyBytes) {
    throw new PayloadTooLargeError(`The request body exceeds ${LIMITS.bodyBytes} bytes.`);
  }
  let value: unknown;
  if (text.trim() === '') {
    if (!options.optional) throw new ValidationError('A JSON request body is required.');
    value = {};
  } else {
    try {
      value = JSON.parse(text);
    } catch {
      throw new ValidationError('The request body is not valid JSON.');
    }
    assertStorableJson(value);
  }
  const result = z.safeParse(schema, value);
  if (!result.success) throw new ValidationError('The request body is invalid.', zodDetails(result.error));
  return result.data;
}

/**
 * Validates one path parameter with its schema. An id outside its length and alphabet names no
 * resource: a 404, answered without touching the database.
 */
export function pathParam<S extends z.core.$ZodType<string>>(
  event: HttpEvent,
  name: string,
  schema: S,
): z.infer<S> {
  const value = event.pathParameters?.[name];
  const result = z.safeParse(schema, value);
  if (!result.success) {
    throw new NotFoundError(
      `No resource has this ${name}: ${result.error.issues[0]?.message ?? 'malformed'}.`,
    );
  }
  return result.data;
}

/** Reads a single query-string parameter (API Gateway keeps the last of repeated ones). */
export function queryParam(event: HttpEvent, name: string): string | undefined {
  return event.queryStringParameters?.[name] ?? undefined;
}

/** A header, case-insensitively (API Gateway keeps the client's casing). */
export function header(event: HttpEvent, name: string): string | undefined {
  return findHeader(event.headers, name);
}

/** Parses the `limit` query parameter of a list endpoint. */
export function pageLimit(event: HttpEvent, fallback = 20): number {
  const raw = queryParam(event, 'limit');
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1 || value > LIMITS.pageSize) {
    throw new ValidationError(`limit must be an integer from 1 to ${LIMITS.pageSize}.`);
  }
  return value;
}

/**
 * The Location of a run, relative to the host: on the default execute-api endpoint the stage is
 * part of the path (`/prod/...`), behind a custom domain or the local gateway it is not.
 */
export function runLocation(event: HttpEvent, runId: string): string {
  const fullPath = event.requestContext?.path ?? event.path;
  const stagePrefix = fullPath.endsWith(event.path)
    ? fullPath.slice(0, fullPath.length - event.path.length)
    : '';
  return `${stagePrefix}/synthesis-runs/${runId}`;
}
