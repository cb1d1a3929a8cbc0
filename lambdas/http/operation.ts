/*
 * An API operation's Lambda handler, built from its declaration (operations/declaration.ts): it
 * parses exactly what the declaration lists (caller, path, query, headers, body), calls the
 * operation's implementation, and answers the declared success status; a status the declaration
 * does not list is never sent (it is logged and answered as a 500).
 */
import type { Context } from 'aws-lambda';
import type * as z from 'zod/mini';
import type { Principal } from '../core/principal.ts';
import { logger } from '../observability/logger.ts';
import {
  answerableStatuses,
  type OperationDeclaration,
  type ParameterSpec,
} from '../operations/declaration.ts';
import { errorResponse } from './errors.ts';
import { httpHandler } from './handler.ts';
import {
  headerValue,
  parseBody,
  parseParameters,
  parsePathParameters,
  principalOf,
  queryValue,
} from './parse.ts';
import {
  type HttpEvent,
  type HttpResult,
  json,
  noContent,
  SECURITY_HEADERS,
  withCookies,
} from './response.ts';

type ParsedSpecs<T> =
  T extends Readonly<Record<string, ParameterSpec>>
    ? { [K in keyof T]: z.infer<T[K]['schema']> }
    : Record<string, never>;
type ParsedParams<T> =
  T extends Readonly<Record<string, z.ZodMiniType<string>>>
    ? { [K in keyof T]: z.infer<T[K]> }
    : Record<string, never>;
type ParsedBody<T> = T extends { schema: infer S extends z.ZodMiniType } ? z.infer<S> : undefined;
type ResponseBody<R> = R extends { schema: infer S }
  ? S extends z.ZodMiniType
    ? z.infer<S>
    : unknown
  : undefined;

/** What an implementation is given: the request as its declaration parses it. */
export interface OperationRequest<D extends OperationDeclaration> {
  /** The caller; undefined only for a public operation. */
  principal: D['public'] extends string ? undefined : Principal;
  params: ParsedParams<D['params']>;
  query: ParsedSpecs<D['query']>;
  headers: ParsedSpecs<D['headers']>;
  body: ParsedBody<D['body']>;
  /** The raw event, for what a declaration does not parse (cookies, the base path). */
  event: HttpEvent;
  context: Context;
}

/** The success answer; its status is the declaration's. */
export type OperationAnswer<D extends OperationDeclaration> = (D['response'] extends { schema: unknown }
  ? { body: ResponseBody<D['response']> }
  : { body?: undefined }) & { headers?: Record<string, string>; cookies?: readonly string[] };

/** An answer built by hand (an HTML page, an asset, a redirect): its status must still be declared. */
export interface RawAnswer {
  raw: HttpResult;
}

export type Implementation<D extends OperationDeclaration> = (
  request: OperationRequest<D>,
) => Promise<OperationAnswer<D> | RawAnswer>;

function resultOf(
  declarations: readonly [OperationDeclaration, ...OperationDeclaration[]],
  answer: OperationAnswer<OperationDeclaration> | RawAnswer,
): HttpResult {
  const [declaration] = declarations;
  if ('raw' in answer) {
    const declared = declarations.some((served) =>
      answerableStatuses(served).includes(answer.raw.statusCode),
    );
    // A raw answer (an export's NDJSON, a protocol's own body) carries them as a JSON one does.
    if (declared) return { ...answer.raw, headers: { ...SECURITY_HEADERS, ...answer.raw.headers } };
    logger.error('operation answered a status it does not declare', {
      operation: declaration.name,
      status: answer.raw.statusCode,
    });
    return errorResponse(undefined);
  }
  const { status, schema } = declaration.response;
  const result = schema === undefined ? noContent(answer.headers) : json(status, answer.body, answer.headers);
  return withCookies(result, answer.cookies ?? []);
}

/**
 * The Lambda handler of an operation. `build` composes the implementation (stores, clients,
 * use cases) once per execution environment: during init inside Lambda (or the local runtime),
 * and on the first request anywhere else, so that reading a declaration (the CDK stack, the local
 * gateway, the OpenAPI document) needs no environment. `alsoServes` names the other operations
 * of a module whose function serves several paths (their statuses may be answered too).
 */
export function operationHandler<const D extends OperationDeclaration>(
  declaration: D,
  build: () => Implementation<D> | Promise<Implementation<D>>,
  { alsoServes = [] }: { alsoServes?: readonly OperationDeclaration[] } = {},
) {
  let implementation: Promise<Implementation<D>> | undefined;
  const implement = () => {
    implementation ??= Promise.resolve().then(build);
    return implementation;
  };
  if (process.env.AWS_LAMBDA_FUNCTION_NAME) implement().catch(() => undefined);
  return httpHandler(async (event, context) => {
    const request = {
      principal: declaration.public === undefined ? principalOf(event) : undefined,
      params: parsePathParameters(event, declaration.params ?? {}),
      query: parseParameters(declaration.query ?? {}, queryValue(event), 'query parameter'),
      headers: parseParameters(declaration.headers ?? {}, headerValue(event), 'header'),
      body: declaration.body
        ? parseBody(event, declaration.body.schema, declaration.body.required)
        : undefined,
      event,
      context,
    } as OperationRequest<D>;
    const answer = await (await implement())(request);
    return resultOf(
      [declaration, ...alsoServes],
      answer as OperationAnswer<OperationDeclaration> | RawAnswer,
    );
  });
}
