/*
 * The middy stack of every API function: the Lambda context in the logger, then the handler, with
 * the error mapper last.
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { logger } from '../observability/logger.ts';
import { errorMapper } from './errors.ts';
import type { HttpEvent, HttpResult } from './response.ts';

/** Wraps a function of the request into a Lambda handler with the shared middleware. */
export function httpHandler(fn: (event: HttpEvent, context: Context) => Promise<HttpResult>) {
  return middy<HttpEvent, HttpResult>()
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(errorMapper())
    .handler(fn);
}
