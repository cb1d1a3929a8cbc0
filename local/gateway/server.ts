/**
 * A local API Gateway (REST API, Lambda proxy integrations, one Lambda REQUEST authorizer) that
 * serves the route table. It builds real proxy events, runs the authorizer the way API Gateway
 * does, invokes the functions through the local function runtime, and answers its own errors
 * with the gateway response bodies the CDK stack configures.
 *
 * Differences from AWS, on purpose: a known path with an unknown method is a 404 NOT_FOUND (API
 * Gateway's 403 MISSING_AUTHENTICATION_TOKEN, which the stack maps to 404 for both cases); there
 * is no stage prefix in the URL, so `requestContext.path` (the path the client asked for) equals
 * `event.path`, as behind a custom domain on AWS; and the authorizer runs on every request, as the
 * stack sets no identity source and no result cache.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type {
  APIGatewayEventRequestContextWithAuthorizer,
  APIGatewayProxyEvent,
  APIGatewayRequestAuthorizerEvent,
} from 'aws-lambda';
import type { RouteDefinition } from '../../lambdas/routes.ts';
import { InvocationTimeoutError } from '../runtime/lambda-function.ts';
import { readAuthorizerResult } from './authorizer.ts';
import { formatRequestTime, identity, queryParameters, requestHeaders, resourceId } from './events.ts';
import type { LocalRateLimits } from './rate-limit.ts';
import { gatewayResponse, proxyReply, type Reply, rateLimitedResponse } from './responses.ts';
import { MalformedPathError, RouteTable } from './routing.ts';

/** API Gateway's payload limit. */
export const MAX_BODY_BYTES = 10 * 1024 * 1024;
/** API Gateway's default integration timeout. */
const INTEGRATION_TIMEOUT_MS = 29_000;

/** Invokes the function of a route's `entry` (or the authorizer's) with an event; rejects when it fails. */
export type Invoke = (entry: string, event: unknown, requestId: string) => Promise<unknown>;

export interface LocalGatewayOptions {
  /** 0 for a free port. */
  port: number;
  host?: string;
  routes: readonly RouteDefinition[];
  invoke: Invoke;
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
  /** The web ACL's per-caller rates; none when absent. */
  rateLimits?: LocalRateLimits;
}

export interface LocalGateway {
  url: string;
  port: number;
  stop(): Promise<void>;
}

class IntegrationTimeoutError extends Error {}
class ClientGoneError extends Error {}

/** The function's result, or an IntegrationTimeoutError when API Gateway would stop waiting. */
async function withinIntegrationTimeout<T>(promise: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new IntegrationTimeoutError()), timeoutMs);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function describeError(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}

/** Serves the route table on `host:port` like API Gateway in front of the functions. */
export async function startLocalGateway(options: LocalGatewayOptions): Promise<LocalGateway> {
  const host = options.host ?? '127.0.0.1';
  const stage = options.stageName ?? 'local';
  const region = options.region ?? 'us-east-1';
  const accountId = options.accountId ?? '000000000000';
  const apiId = options.apiId ?? 'localapi01';
  const integrationTimeoutMs = options.integrationTimeoutMs ?? INTEGRATION_TIMEOUT_MS;
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const routes = new RouteTable(options.routes);
  const invoke = (entry: string, event: unknown, requestId: string) =>
    withinIntegrationTimeout(options.invoke(entry, event, requestId), integrationTimeoutMs);

  /** The authorizer's context for the integration, or the gateway's reply when it does not allow. */
  const authorize = async (
    event: APIGatewayRequestAuthorizerEvent,
    requestId: string,
  ): Promise<{ reply: Reply } | { context: Record<string, string | number> }> => {
    const started = Date.now();
    let result: unknown;
    try {
      result = await invoke(options.authorizerEntry, event, randomUUID());
    } catch (error) {
      // Only this exact message makes API Gateway answer 401; anything else is its 500.
      if (error instanceof Error && error.message === 'Unauthorized')
        return { reply: gatewayResponse('UNAUTHORIZED', requestId) };
      log(`[gateway] authorizer failed on ${event.httpMethod} ${event.path}: ${describeError(error)}`);
      return { reply: gatewayResponse('AUTHORIZER_FAILURE', requestId) };
    }
    const verdict = readAuthorizerResult(result, event.methodArn);
    if (verdict.outcome === 'malformed') {
      log(
        `[gateway] malformed authorizer result on ${event.httpMethod} ${event.path}: ${JSON.stringify(result)}`,
      );
      return { reply: gatewayResponse('AUTHORIZER_CONFIGURATION_ERROR', requestId) };
    }
    if (verdict.outcome === 'deny') return { reply: gatewayResponse('ACCESS_DENIED', requestId) };
    return { context: { ...verdict.context, integrationLatency: Date.now() - started } };
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

    // The web ACL sits in front of API Gateway: it counts (and refuses) before anything else.
    const retryAfter = options.rateLimits?.check({
      path,
      sourceIp: (request.socket.remoteAddress ?? '').replace(/^::ffff:/, ''),
      header: (name) => {
        const value = request.headers[name];
        return Array.isArray(value) ? value.join(', ') : value;
      },
    });
    if (retryAfter) {
      request.resume();
      return rateLimitedResponse(requestId, retryAfter);
    }

    const body = await readBody(request, MAX_BODY_BYTES);
    if (body === undefined) return gatewayResponse('REQUEST_TOO_LARGE', requestId);

    let match: ReturnType<RouteTable['match']>;
    try {
      match = routes.match(method, path);
    } catch (error) {
      if (error instanceof MalformedPathError) return gatewayResponse('BAD_REQUEST_PARAMETERS', requestId);
      throw error;
    }
    const route = match?.route;
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
      const allowed = await authorize(
        {
          type: 'REQUEST',
          methodArn: `arn:aws:execute-api:${region}:${accountId}:${apiId}/${stage}/${method}/${path.replace(/^\//, '')}`,
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
        },
        requestId,
      );
      if ('reply' in allowed) return allowed.reply;
      authorizer = allowed.context;
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
      const timedOut = error instanceof InvocationTimeoutError || error instanceof IntegrationTimeoutError;
      return gatewayResponse(timedOut ? 'INTEGRATION_TIMEOUT' : 'INTEGRATION_FAILURE', requestId);
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
  // Node closes an idle keep-alive connection after 5 s, just when a client polling with a 5 s
  // backoff reuses it: the client's request then dies with "other side closed". Keep idle
  // connections as long as a load balancer in front of API Gateway would (60 s).
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const urlHost = host.includes(':') ? `[${host}]` : host;

  return {
    url: `http://${urlHost}:${port}`,
    port,
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
