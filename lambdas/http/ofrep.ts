/*
 * OFREP's error answers: the OpenFeature providers read `{key, errorCode, errorDetails}` (without
 * `key` on the bulk evaluation), not this API's `{error, message}`. A middleware in front of the
 * shared error mapper: 401, 403, 413 and 429 keep the API's answers, as OFREP leaves them open.
 */
import type { MiddlewareObj } from '@middy/core';
import { ApiError } from '../core/errors.ts';
import { FlagNotFoundError } from '../core/use-cases/ofrep.ts';
import { logger } from '../observability/logger.ts';
import { describeError } from './errors.ts';
import { type HttpEvent, type HttpResult, json } from './response.ts';

export type OfrepErrorCode = 'PARSE_ERROR' | 'INVALID_CONTEXT' | 'FLAG_NOT_FOUND' | 'GENERAL';

/** What a 400 says in OFREP's codes: a body that is no JSON, or a context outside its schema. */
function badRequest(error: ApiError): { errorCode: OfrepErrorCode; errorDetails: string } {
  const issues = Array.isArray(error.details) ? (error.details as { path: string; message: string }[]) : [];
  if (issues.length === 0) return { errorCode: 'PARSE_ERROR', errorDetails: error.message };
  const said = issues.map((issue) => `${issue.path || 'body'}: ${issue.message}`).join('; ');
  return { errorCode: 'INVALID_CONTEXT', errorDetails: `${error.message} ${said}` };
}

/** The OFREP answer to an error, or undefined to leave it to the API's own mapper. */
export function ofrepErrorResponse(error: unknown, key: string | undefined): HttpResult | undefined {
  const keyed = key === undefined ? {} : { key };
  if (error instanceof ApiError && error.statusCode === 400)
    return json(400, { ...keyed, ...badRequest(error) });
  if (error instanceof ApiError && error.statusCode === 404 && key !== undefined)
    return json(404, { key, errorCode: 'FLAG_NOT_FOUND', errorDetails: new FlagNotFoundError(key).message });
  if (error instanceof ApiError) return undefined;
  logger.error('unhandled error', { ...describeError(error) });
  return json(500, { errorDetails: 'Something went wrong on our side; the evaluation may be retried.' });
}

/**
 * Answers the errors OFREP defines in its shapes; `withKey` for the single evaluation (the flag key
 * is the path's `key`).
 */
export const ofrepErrors = ({ withKey }: { withKey: boolean }): MiddlewareObj<HttpEvent, HttpResult> => ({
  onError: async (request) => {
    const key = withKey ? (request.event.pathParameters?.key ?? '') : undefined;
    const answer = ofrepErrorResponse(request.error, key);
    if (answer === undefined) return undefined;
    if (request.error instanceof ApiError) logger.info('request refused', { status: answer.statusCode });
    return answer;
  },
});
