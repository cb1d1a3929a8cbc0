/**
 * A local API Gateway (REST API, Lambda proxy integrations, one Lambda REQUEST authorizer) that
 * serves the route table with the same handler modules as AWS. It builds real proxy events, runs
 * the authorizer the way API Gateway does, and answers its own errors with the gateway response
 * bodies the CDK stack configures (lib/gateway-errors.ts).
 *
 * Differences from AWS, on purpose: a known path with an unknown method is a 404 NOT_FOUND (API
 * Gateway's 403 MISSING_AUTHENTICATION_TOKEN, which the stack maps to 404 for both cases); there
 * is no stage prefix in the URL, so `requestContext.path` (the path the client asked for) equals
 * `event.path`, as behind a custom domain on AWS; and the authorizer runs on every request, as the stack sets no
 * identity source and no result cache.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import {
  createServer,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type ServerResponse,
  validateHeaderName,
  validateHeaderValue,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import type {
  APIGatewayEventIdentity,
  APIGatewayEventRequestContextWithAuthorizer,
  APIGatewayProxyEvent,
  APIGatewayRequestAuthorizerEvent,
  Context,
} from 'aws-lambda';
import { z } from 'zod';
import type { RouteDefinition } from '../lambdas/routes.ts';
import { GATEWAY_ERRORS } from '../lib/gateway-errors.ts';
import { describeError, InvocationTimeoutError, withTimeout } from './invoke.ts';

/** API Gateway's payload limit. */
export const MAX_BODY_BYTES = 10 * 1024 * 1024;
/** API Gateway's default integration timeout. */
const INTEGRATION_TIMEOUT_MS = 29_000;

/** Resolves a route's `entry` (or the authorizer's) to its Lambda handler function. */
export type HandlerLoader = (entry: string) => Promise<unknown>;

export interface LocalGatewayOptions {
  /** 0 for a free port. */
  port: number;
  host?: string;
  routes: readonly RouteDefinition[];
  loadHandler: HandlerLoader;
  authorizerEntry: string;
  stageName?: string;
  region?: string;
  accountId?: string;
  apiId?: string;
  integrationTimeoutMs?: number;
  /** No access-log line per request (errors are still logged). */
  quiet?: boolean;
  /** Where access lines and errors go; stderr by default. */
  log?: (line: string) => void;
}

export interface LocalGateway {
  url: string;
  port: number;
  /** Loads every route handler and the authorizer now, so a broken module fails at startup. */
  preload(): Promise<void>;
  stop(): Promise<void>;
}

type LambdaFunction = (event: unknown, context: Context) => unknown;

interface Reply {
  status: number;
  headers: OutgoingHttpHeaders;
  body: Buffer;
}

// ---------------------------------------------------------------------------------------------
// Lambda-like context, shared with the local queue's event source.

export interface LambdaContextOptions {
  functionName: string;
  timeoutMs: number;
  region: string;
  accountId: string;
  awsRequestId?: string;
}

/** A Lambda invocation context whose getRemainingTimeInMillis counts down from `timeoutMs`. */
export function createLambdaContext(options: LambdaContextOptions): Context {
  const deadline = Date.now() + options.timeoutMs;
  const unsupported = (name: string) => (): never => {
    throw new Error(`context.${name}() is not supported by the local stack; return or throw instead.`);
  };
  const day = new Date().toISOString().slice(0, 10).replaceAll('-', '/');
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: options.functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${options.region}:${options.accountId}:function:${options.functionName}`,
    memoryLimitInMB: '1024',
    awsRequestId: options.awsRequestId ?? randomUUID(),
    logGroupName: `/aws/lambda/${options.functionName}`,
    logStreamName: `${day}/[$LATEST]${randomBytes(16).toString('hex')}`,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: unsupported('done'),
    fail: unsupported('fail'),
    succeed: unsupported('succeed'),
  };
}

/** Loads `<directory>/<entry>.ts` and returns its exported `handler`, the way the Lambda runtime does. */
export function moduleHandlerLoader(directory: URL): HandlerLoader {
  const base = directory.href.endsWith('/') ? directory : new URL(`${directory.href}/`);
  return async (entry) => {
    const module: unknown = await import(new URL(`${entry}.ts`, base).href);
    return typeof module === 'object' && module !== null && 'handler' in module ? module.handler : undefined;
  };
}

// ---------------------------------------------------------------------------------------------
// Gateway responses, from the same table as the CDK stack.

type GatewayResponseType =
  | 'UNAUTHORIZED'
  | 'ACCESS_DENIED'
  | 'MISSING_AUTHENTICATION_TOKEN'
  | 'REQUEST_TOO_LARGE'
  | 'BAD_REQUEST_PARAMETERS'
  | 'AUTHORIZER_FAILURE'
  | 'AUTHORIZER_CONFIGURATION_ERROR'
  | 'INTEGRATION_FAILURE'
  | 'INTEGRATION_TIMEOUT';

/** API Gateway's own status and x-amzn-ErrorType for each response type. */
const RESPONSE_TYPES: Record<GatewayResponseType, { status: number; errorType: string }> = {
  UNAUTHORIZED: { status: 401, errorType: 'UnauthorizedException' },
  ACCESS_DENIED: { status: 403, errorType: 'AccessDeniedException' },
  MISSING_AUTHENTICATION_TOKEN: { status: 403, errorType: 'MissingAuthenticationTokenException' },
  REQUEST_TOO_LARGE: { status: 413, errorType: 'RequestTooLargeException' },
  BAD_REQUEST_PARAMETERS: { status: 400, errorType: 'BadRequestException' },
  AUTHORIZER_FAILURE: { status: 500, errorType: 'AuthorizerFailureException' },
  AUTHORIZER_CONFIGURATION_ERROR: { status: 500, errorType: 'AuthorizerConfigurationException' },
  // A Lambda proxy function that fails or answers something malformed.
  INTEGRATION_FAILURE: { status: 502, errorType: 'InternalServerErrorException' },
  INTEGRATION_TIMEOUT: { status: 504, errorType: 'InternalServerErrorException' },
};

function gatewayResponse(type: GatewayResponseType, requestId: string): Reply {
  const { status, errorType } = RESPONSE_TYPES[type];
  // Like API Gateway: a type without its own response falls back to DEFAULT_4XX / DEFAULT_5XX.
  const configured =
    GATEWAY_ERRORS.find((candidate) => candidate.type === type) ??
    GATEWAY_ERRORS.find((candidate) => candidate.type === (status >= 500 ? 'DEFAULT_5XX' : 'DEFAULT_4XX'));
  const body = configured
    ? { error: configured.error, message: configured.message }
    : { error: status >= 500 ? 'INTERNAL_ERROR' : 'VALIDATION_ERROR', message: 'The request failed.' };
  return {
    status: configured?.statusCode === undefined ? status : Number(configured.statusCode),
    headers: {
      'content-type': 'application/json',
      'x-amzn-requestid': requestId,
      'x-amzn-errortype': errorType,
    },
    body: Buffer.from(JSON.stringify(body)),
  };
}

// ---------------------------------------------------------------------------------------------
// Route matching: API Gateway picks the most specific resource for the path, then its method.

interface CompiledResource {
  path: string;
  segments: Array<{ literal: string } | { parameter: string }>;
  /** A last `{name+}` segment: API Gateway's greedy parameter takes one or more segments. */
  greedy?: string;
  methods: Map<string, RouteDefinition>;
}

function compileRoutes(routes: readonly RouteDefinition[]): CompiledResource[] {
  const byPath = new Map<string, CompiledResource>();
  for (const route of routes) {
    let resource = byPath.get(route.path);
    if (resource === undefined) {
      const segments = splitPath(route.path).map((segment) => {
        const parameter = /^\{(.+)\}$/.exec(segment)?.[1];
        return parameter === undefined ? { literal: segment } : { parameter };
      });
      const greedy = segments.at(-1)?.parameter?.endsWith('+') ? segments.at(-1)?.parameter : undefined;
      if (greedy !== undefined) segments.pop();
      resource = { path: route.path, segments, ...(greedy ? { greedy } : {}), methods: new Map() };
      byPath.set(route.path, resource);
    }
    if (resource.methods.has(route.method))
      throw new Error(`Route ${route.method} ${route.path} is defined twice`);
    resource.methods.set(route.method, route);
  }
  return [...byPath.values()];
}

function splitPath(path: string): string[] {
  const trimmed = path.replace(/^\/+/, '').replace(/\/$/, '');
  return trimmed.length === 0 ? [] : trimmed.split('/');
}

class MalformedPathError extends Error {}

interface ResourceMatch {
  resource: CompiledResource;
  pathParameters: Record<string, string>;
}

function matchResource(resources: CompiledResource[], path: string): ResourceMatch | undefined {
  const segments = splitPath(path);
  let best: CompiledResource | undefined;
  for (const resource of resources) {
    const lengthFits = resource.greedy
      ? segments.length > resource.segments.length
      : segments.length === resource.segments.length;
    if (!lengthFits) continue;
    const fits = resource.segments.every((segment, index) =>
      'literal' in segment ? segment.literal === segments[index] : segments[index] !== '',
    );
    // A resource without a greedy parameter beats one with it; otherwise the more specific wins.
    const better =
      best === undefined ||
      (!resource.greedy && best.greedy !== undefined) ||
      (Boolean(resource.greedy) === Boolean(best.greedy) && moreSpecific(resource, best));
    if (fits && better) best = resource;
  }
  if (best === undefined) return undefined;
  const pathParameters: Record<string, string> = {};
  for (const [index, segment] of best.segments.entries()) {
    if (!('parameter' in segment)) continue;
    try {
      pathParameters[segment.parameter] = decodeURIComponent(segments[index] ?? '');
    } catch {
      throw new MalformedPathError(path);
    }
  }
  if (best.greedy) {
    // API Gateway names the parameter without the `+` and passes the rest of the path, decoded.
    const rest = segments.slice(best.segments.length).join('/');
    try {
      pathParameters[best.greedy.slice(0, -1)] = decodeURIComponent(rest);
    } catch {
      throw new MalformedPathError(path);
    }
  }
  return { resource: best, pathParameters };
}

/** A literal segment beats a parameter at the first position where the two differ. */
function moreSpecific(candidate: CompiledResource, current: CompiledResource): boolean {
  for (const [index, segment] of candidate.segments.entries()) {
    const other = current.segments[index];
    if (other === undefined) return false;
    if ('literal' in segment !== 'literal' in other) return 'literal' in segment;
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// The authorizer's answer, read the way API Gateway reads it.

const stringOrList = z.union([z.string(), z.array(z.string())]);
const statementSchema = z.object({
  Effect: z.enum(['Allow', 'Deny']),
  Action: stringOrList.optional(),
  NotAction: stringOrList.optional(),
  Resource: stringOrList.optional(),
  NotResource: stringOrList.optional(),
});
const authorizerResultSchema = z.object({
  principalId: z.string(),
  policyDocument: z.object({
    Version: z.string().optional(),
    Statement: z.union([statementSchema, z.array(statementSchema)]),
  }),
  // API Gateway refuses objects and arrays in the context; only scalars reach the handler.
  context: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).nullish(),
  usageIdentifierKey: z.string().nullish(),
});
type PolicyStatement = z.infer<typeof statementSchema>;

function wildcardPattern(pattern: string, flags: string): RegExp {
  const source = [...pattern]
    .map((char) => (char === '*' ? '.*' : char === '?' ? '.' : char.replace(/[.+^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${source}$`, flags);
}

function matchesAny(patterns: string | string[], value: string, flags: string): boolean {
  return (Array.isArray(patterns) ? patterns : [patterns]).some((pattern) =>
    wildcardPattern(pattern, flags).test(value),
  );
}

function statementApplies(statement: PolicyStatement, methodArn: string): boolean {
  // IAM matches actions case-insensitively and resources case-sensitively.
  const action =
    statement.Action !== undefined
      ? matchesAny(statement.Action, 'execute-api:Invoke', 'i')
      : statement.NotAction !== undefined && !matchesAny(statement.NotAction, 'execute-api:Invoke', 'i');
  const resource =
    statement.Resource !== undefined
      ? matchesAny(statement.Resource, methodArn, '')
      : statement.NotResource !== undefined && !matchesAny(statement.NotResource, methodArn, '');
  return action && resource;
}

/** IAM evaluation for one action and resource: an explicit Deny wins, otherwise an Allow is needed. */
function policyAllows(statements: PolicyStatement | PolicyStatement[], methodArn: string): boolean {
  const applicable = (Array.isArray(statements) ? statements : [statements]).filter((statement) =>
    statementApplies(statement, methodArn),
  );
  if (applicable.some((statement) => statement.Effect === 'Deny')) return false;
  return applicable.some((statement) => statement.Effect === 'Allow');
}

// ---------------------------------------------------------------------------------------------
// The server.

/** Serves the route table on `host:port` like API Gateway in front of the handler modules. */
export async function startLocalGateway(options: LocalGatewayOptions): Promise<LocalGateway> {
  const host = options.host ?? '127.0.0.1';
  const stage = options.stageName ?? 'local';
  const region = options.region ?? 'us-east-1';
  const accountId = options.accountId ?? '000000000000';
  const apiId = options.apiId ?? 'localapi01';
  const integrationTimeoutMs = options.integrationTimeoutMs ?? INTEGRATION_TIMEOUT_MS;
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const resources = compileRoutes(options.routes);

  // One promise per entry: concurrent first requests share one import, later ones reuse it.
  const handlers = new Map<string, Promise<LambdaFunction>>();
  const handlerFor = (entry: string): Promise<LambdaFunction> => {
    let loaded = handlers.get(entry);
    if (loaded === undefined) {
      loaded = options.loadHandler(entry).then((candidate) => {
        if (!isLambdaFunction(candidate))
          throw new Error(`The module for '${entry}' exports no handler function`);
        return candidate;
      });
      // A failed load is not cached, so fixing the module and retrying works.
      loaded.catch(() => handlers.delete(entry));
      handlers.set(entry, loaded);
    }
    return loaded;
  };

  const invoke = async (entry: string, event: unknown, requestId: string): Promise<unknown> => {
    const handler = await handlerFor(entry);
    const context = createLambdaContext({
      functionName: `local-${entry}`,
      timeoutMs: integrationTimeoutMs,
      region,
      accountId,
      awsRequestId: requestId,
    });
    // Events and results cross the Lambda boundary as JSON: undefined values, class instances and
    // functions do not survive it, locally either.
    const result = await withTimeout(Promise.resolve(handler(asJson(event), context)), integrationTimeoutMs);
    return asJson(result);
  };

  const handle = async (request: IncomingMessage): Promise<Reply> => {
    const requestId = randomUUID();
    const requestTimeEpoch = Date.now();
    const method = request.method ?? 'GET';
    const target = request.url ?? '/';
    // Prefixing keeps a path like `//x` a path; `new URL('//x', base)` would read x as a host.
    const url = target.startsWith('/')
      ? new URL(`http://localhost${target}`)
      : new URL(target, 'http://localhost');
    const path = url.pathname;

    const body = await readBody(request, MAX_BODY_BYTES);
    if (body === undefined) return gatewayResponse('REQUEST_TOO_LARGE', requestId);

    let match: ResourceMatch | undefined;
    try {
      match = matchResource(resources, path);
    } catch (error) {
      if (error instanceof MalformedPathError) return gatewayResponse('BAD_REQUEST_PARAMETERS', requestId);
      throw error;
    }
    const route = match?.resource.methods.get(method);
    if (match === undefined || route === undefined)
      return gatewayResponse('MISSING_AUTHENTICATION_TOKEN', requestId);

    const { headers, multiValueHeaders } = requestHeaders(request);
    const query = queryParameters(url.searchParams);
    const pathParameters = Object.keys(match.pathParameters).length > 0 ? match.pathParameters : null;
    const hostHeader = request.headers.host ?? `${host}`;
    const requestContext: APIGatewayEventRequestContextWithAuthorizer<undefined> = {
      accountId,
      apiId,
      authorizer: undefined,
      domainName: hostHeader,
      domainPrefix: hostHeader.split('.')[0] ?? hostHeader,
      extendedRequestId: requestId,
      httpMethod: method,
      identity: identity(request),
      path,
      protocol: `HTTP/${request.httpVersion}`,
      requestId,
      requestTime: formatRequestTime(new Date(requestTimeEpoch)),
      requestTimeEpoch,
      resourceId: resourceId(route.path),
      resourcePath: route.path,
      stage,
    };

    let authorizer: Record<string, string | number> | undefined;
    if (route.authorized) {
      const methodArn = `arn:aws:execute-api:${region}:${accountId}:${apiId}/${stage}/${method}/${path.replace(/^\//, '')}`;
      const authorizerEvent: APIGatewayRequestAuthorizerEvent = {
        type: 'REQUEST',
        methodArn,
        resource: route.path,
        path,
        httpMethod: method,
        headers,
        multiValueHeaders,
        pathParameters,
        queryStringParameters: query.single,
        multiValueQueryStringParameters: query.multi,
        stageVariables: null,
        requestContext,
      };
      const started = Date.now();
      let result: unknown;
      try {
        result = await invoke(options.authorizerEntry, authorizerEvent, randomUUID());
      } catch (error) {
        const message = error instanceof Error ? error.message : error;
        // Only this exact message makes API Gateway answer 401; anything else is its 500.
        if (message === 'Unauthorized') return gatewayResponse('UNAUTHORIZED', requestId);
        log(`[gateway] authorizer failed on ${method} ${path}: ${describeError(error)}`);
        return gatewayResponse('AUTHORIZER_FAILURE', requestId);
      }
      const parsed = authorizerResultSchema.safeParse(result);
      if (!parsed.success) {
        log(`[gateway] malformed authorizer result on ${method} ${path}: ${JSON.stringify(result)}`);
        return gatewayResponse('AUTHORIZER_CONFIGURATION_ERROR', requestId);
      }
      if (!policyAllows(parsed.data.policyDocument.Statement, methodArn)) {
        return gatewayResponse('ACCESS_DENIED', requestId);
      }
      authorizer = {};
      // The Lambda proxy integration receives every context value as a string.
      for (const [key, value] of Object.entries(parsed.data.context ?? {})) authorizer[key] = String(value);
      authorizer.principalId = parsed.data.principalId;
      authorizer.integrationLatency = Date.now() - started;
    }

    const event: APIGatewayProxyEvent = {
      resource: route.path,
      path,
      httpMethod: method,
      headers,
      multiValueHeaders,
      queryStringParameters: query.single,
      multiValueQueryStringParameters: query.multi,
      pathParameters,
      stageVariables: null,
      // Without an authorizer the key is absent (undefined vanishes in the JSON).
      requestContext: { ...requestContext, authorizer },
      body: body.length === 0 ? null : body.toString('utf8'),
      isBase64Encoded: false,
    };

    let result: unknown;
    try {
      result = await invoke(route.entry, event, requestId);
    } catch (error) {
      log(`[gateway] ${route.entry} failed on ${method} ${path}: ${describeError(error)}`);
      return gatewayResponse(
        error instanceof InvocationTimeoutError ? 'INTEGRATION_TIMEOUT' : 'INTEGRATION_FAILURE',
        requestId,
      );
    }
    const reply = proxyReply(result, requestId);
    if (reply === undefined) {
      log(`[gateway] malformed response from ${route.entry} on ${method} ${path}: ${JSON.stringify(result)}`);
      return gatewayResponse('INTEGRATION_FAILURE', requestId);
    }
    return reply;
  };

  const server = createServer((request, response) => {
    const started = performance.now();
    // The path only: query strings can carry one-time tokens (magic links).
    const path = (request.url ?? '/').split('?')[0];
    handle(request)
      .catch((error: unknown) => {
        if (!(error instanceof ClientGoneError))
          log(`[gateway] ${request.method} ${path}: ${describeError(error)}`);
        return gatewayResponse('INTEGRATION_FAILURE', randomUUID());
      })
      .then((reply) => {
        send(response, reply);
        if (!options.quiet)
          log(`${request.method} ${path} ${reply.status} ${(performance.now() - started).toFixed(1)}ms`);
      });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const urlHost = host.includes(':') ? `[${host}]` : host;

  return {
    url: `http://${urlHost}:${port}`,
    port,
    async preload() {
      const entries = [options.authorizerEntry, ...options.routes.map((route) => route.entry)];
      await Promise.all([...new Set(entries)].map((entry) => handlerFor(entry)));
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Idle keep-alive connections would hold close() open; requests in progress finish.
        server.closeIdleConnections();
      }),
  };
}

function send(response: ServerResponse, reply: Reply): void {
  if (response.headersSent) {
    response.end();
    return;
  }
  response.writeHead(reply.status, reply.headers);
  response.end(reply.body);
}

/**
 * Reads the body; undefined once it passes `maxBytes`. The rest is still drained rather than
 * cut off, so the client reads the 413 instead of a reset connection.
 */
function readBody(request: IncomingMessage, maxBytes: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) chunks.push(chunk);
      else chunks.length = 0;
    });
    request.on('end', () => resolve(size > maxBytes ? undefined : Buffer.concat(chunks)));
    request.on('error', reject);
    // A client that hangs up mid-body would otherwise leave this promise pending forever.
    request.on('close', () => {
      if (!request.complete) reject(new ClientGoneError('The client closed the connection.'));
    });
  });
}

class ClientGoneError extends Error {}

function requestHeaders(request: IncomingMessage): {
  headers: Record<string, string>;
  multiValueHeaders: Record<string, string[]>;
} {
  const headers: Record<string, string> = {};
  const multiValueHeaders: Record<string, string[]> = {};
  const add = (name: string, value: string) => {
    // Like API Gateway: names as sent, the last value in `headers`, all of them in `multiValueHeaders`.
    headers[name] = value;
    multiValueHeaders[name] = [...(multiValueHeaders[name] ?? []), value];
  };
  const raw = request.rawHeaders;
  for (let index = 0; index + 1 < raw.length; index += 2) add(raw[index] ?? '', raw[index + 1] ?? '');
  const sourceIp = clientIp(request);
  const forwardedFor = Object.keys(headers).find((name) => name.toLowerCase() === 'x-forwarded-for');
  if (forwardedFor === undefined) add('X-Forwarded-For', sourceIp);
  add('X-Forwarded-Port', String(request.socket.localPort ?? ''));
  add('X-Forwarded-Proto', 'http');
  return { headers, multiValueHeaders };
}

function queryParameters(searchParams: URLSearchParams): {
  single: Record<string, string> | null;
  multi: Record<string, string[]> | null;
} {
  const single: Record<string, string> = {};
  const multi: Record<string, string[]> = {};
  for (const [name, value] of searchParams) {
    single[name] = value;
    multi[name] = [...(multi[name] ?? []), value];
  }
  return Object.keys(single).length === 0 ? { single: null, multi: null } : { single, multi };
}

function clientIp(request: IncomingMessage): string {
  return (request.socket.remoteAddress ?? '127.0.0.1').replace(/^::ffff:/, '');
}

function identity(request: IncomingMessage): APIGatewayEventIdentity {
  return {
    accessKey: null,
    accountId: null,
    apiKey: null,
    apiKeyId: null,
    caller: null,
    clientCert: null,
    cognitoAuthenticationProvider: null,
    cognitoAuthenticationType: null,
    cognitoIdentityId: null,
    cognitoIdentityPoolId: null,
    principalOrgId: null,
    sourceIp: clientIp(request),
    user: null,
    userAgent: request.headers['user-agent'] ?? null,
    userArn: null,
  };
}

/** A stable six-character id per resource path, like API Gateway's resource ids. */
function resourceId(path: string): string {
  let hash = 0;
  for (const char of path) hash = (hash * 31 + (char.codePointAt(0) ?? 0)) >>> 0;
  return hash.toString(36).padStart(6, '0').slice(-6);
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** API Gateway's `requestTime`, e.g. `22/Nov/2026:12:00:00 +0000`. */
function formatRequestTime(date: Date): string {
  const two = (value: number) => String(value).padStart(2, '0');
  return `${two(date.getUTCDate())}/${MONTHS[date.getUTCMonth()]}/${date.getUTCFullYear()}:${two(date.getUTCHours())}:${two(date.getUTCMinutes())}:${two(date.getUTCSeconds())} +0000`;
}

const headerValue = z.union([z.string(), z.number(), z.boolean()]);
const proxyResultSchema = z.object({
  statusCode: z.number().int().min(100).max(599),
  headers: z.record(z.string(), headerValue).nullish(),
  multiValueHeaders: z.record(z.string(), z.array(headerValue)).nullish(),
  body: z.string().nullish(),
  isBase64Encoded: z.boolean().nullish(),
});

/** Headers Node computes itself; a handler's value could only contradict the real body. */
const HOP_BY_HOP = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive']);

/** The HTTP reply for a Lambda proxy result, or undefined when API Gateway would call it malformed. */
function proxyReply(result: unknown, requestId: string): Reply | undefined {
  const parsed = proxyResultSchema.safeParse(result);
  if (!parsed.success) return undefined;
  const { statusCode, headers, multiValueHeaders, body, isBase64Encoded } = parsed.data;
  // API Gateway merges both maps; a pair present in both appears once.
  const merged = new Map<string, { name: string; values: string[] }>();
  const add = (name: string, value: string | number | boolean) => {
    const key = name.toLowerCase();
    const entry = merged.get(key) ?? { name, values: [] };
    if (!entry.values.includes(String(value))) entry.values.push(String(value));
    merged.set(key, entry);
  };
  for (const [name, values] of Object.entries(multiValueHeaders ?? {}))
    for (const value of values) add(name, value);
  for (const [name, value] of Object.entries(headers ?? {})) add(name, value);

  const replyHeaders: OutgoingHttpHeaders = {};
  try {
    for (const [key, { name, values }] of merged) {
      if (HOP_BY_HOP.has(key) || key === 'x-amzn-requestid') continue;
      validateHeaderName(name);
      for (const value of values) validateHeaderValue(name, value);
      replyHeaders[name] = values.length === 1 ? values[0] : values;
    }
  } catch {
    return undefined;
  }
  if (!merged.has('content-type')) replyHeaders['Content-Type'] = 'application/json';
  replyHeaders['x-amzn-RequestId'] = requestId;
  return {
    status: statusCode,
    headers: replyHeaders,
    body: Buffer.from(body ?? '', isBase64Encoded ? 'base64' : 'utf8'),
  };
}

function isLambdaFunction(candidate: unknown): candidate is LambdaFunction {
  return typeof candidate === 'function';
}

function asJson(value: unknown): unknown {
  const serialized = JSON.stringify(value);
  return serialized === undefined ? undefined : JSON.parse(serialized);
}
