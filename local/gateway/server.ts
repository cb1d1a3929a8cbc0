/**
 * A local API Gateway (REST API, Lambda proxy integrations, one Lambda REQUEST authorizer) that
 * serves the operations' routes. It builds real proxy events, runs the authorizer the way API Gateway
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
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { APIGatewayProxyEvent, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { InvocationTimeoutError } from '../runtime/lambda-function.ts';
import { readAuthorizerResult } from './authorizer.ts';
import type { LocalRateLimits } from './rate-limit.ts';
import {
  authorizerEvent,
  type GatewayIdentity,
  type IncomingRequest,
  proxyEvent,
  readRequest,
} from './request.ts';
import {
  clientErrorResponse,
  gatewayResponse,
  proxyReply,
  type Reply,
  rateLimitedResponse,
} from './responses.ts';
import { type GatewayRoute, MalformedPathError, type ResourceMatch, RouteTable } from './routing.ts';

/** API Gateway's payload limit. */
export const MAX_BODY_BYTES = 10 * 1024 * 1024;
const EMPTY_BODY = Buffer.alloc(0);
/** API Gateway's default integration timeout. */
const INTEGRATION_TIMEOUT_MS = 29_000;

/** Invokes the function of a route's `entry` (or the authorizer's) with an event; rejects when it fails. */
export type Invoke = (entry: string, event: unknown, requestId: string) => Promise<unknown>;

export interface LocalGatewayOptions {
  /** 0 for a free port. */
  port: number;
  host?: string;
  routes: readonly GatewayRoute[];
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
  /** How long a request may take to arrive whole (headers and body): Node's 300 s by default. */
  requestTimeoutMs?: number;
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

/** The options with their defaults filled in, and the compiled routes: what each request reads. */
interface Gateway extends GatewayIdentity {
  readonly routes: RouteTable;
  readonly authorizerEntry: string;
  /** `options.invoke`, given up on after the integration timeout. */
  readonly invoke: Invoke;
  readonly quiet: boolean;
  readonly log: (line: string) => void;
  readonly rateLimits: LocalRateLimits | undefined;
}

/** Serves the routes on `host:port` like API Gateway in front of the functions. */
export async function startLocalGateway(options: LocalGatewayOptions): Promise<LocalGateway> {
  const gateway = gatewayFrom(options);
  const requestTimeout = options.requestTimeoutMs ?? 300_000;
  const server = createServer(
    // Node looks for requests past their time every this often (30 s by default).
    { connectionsCheckingInterval: Math.min(30_000, Math.max(100, requestTimeout / 4)) },
    (request, response) => serve(gateway, request, response),
  );
  // A request Node cannot read (a control character in a header, a body shorter than its
  // Content-Length when its time runs out) is answered in the gateway's JSON, not a bare status.
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    // Node's own rule: answer only where no answer of the request has begun.
    const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse })._httpMessage;
    if (socket.writable && !inFlight?.headersSent) socket.end(clientErrorResponse(error.code, randomUUID()));
    else socket.destroy();
  });
  // Node closes an idle keep-alive connection after 5 s, just when a client polling with a 5 s
  // backoff reuses it: the client's request then dies with "other side closed". Keep idle
  // connections as long as a load balancer in front of API Gateway would (60 s).
  server.keepAliveTimeout = 65_000;
  server.requestTimeout = requestTimeout;
  server.headersTimeout = Math.min(66_000, requestTimeout);
  await listen(server, options.port, gateway.host);
  const { port } = server.address() as AddressInfo;
  const urlHost = gateway.host.includes(':') ? `[${gateway.host}]` : gateway.host;
  return { url: `http://${urlHost}:${port}`, port, stop: () => close(server) };
}

function gatewayFrom(options: LocalGatewayOptions): Gateway {
  const integrationTimeoutMs = options.integrationTimeoutMs ?? INTEGRATION_TIMEOUT_MS;
  return {
    host: options.host ?? '127.0.0.1',
    stage: options.stageName ?? 'local',
    region: options.region ?? 'us-east-1',
    accountId: options.accountId ?? '000000000000',
    apiId: options.apiId ?? 'localapi01',
    routes: new RouteTable(options.routes),
    authorizerEntry: options.authorizerEntry,
    invoke: (entry, event, requestId) =>
      withinIntegrationTimeout(options.invoke(entry, event, requestId), integrationTimeoutMs),
    quiet: options.quiet ?? false,
    log: options.log ?? ((line: string) => process.stderr.write(`${line}\n`)),
    rateLimits: options.rateLimits,
  };
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
}

function close(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    // Idle keep-alive connections would hold close() open; requests in progress finish.
    server.closeIdleConnections();
  });
}

/** Answers one request, then writes its access-log line. */
function serve(gateway: Gateway, request: IncomingMessage, response: ServerResponse): void {
  const started = performance.now();
  // The path only: query strings can carry one-time tokens (magic links).
  const path = (request.url ?? '/').split('?')[0];
  handle(gateway, request)
    .catch((error: unknown) => {
      if (!(error instanceof ClientGoneError))
        gateway.log(`[gateway] ${request.method} ${path}: ${describeError(error)}`);
      return gatewayResponse('INTEGRATION_FAILURE', randomUUID());
    })
    .then((reply) => {
      send(response, reply);
      if (!gateway.quiet)
        gateway.log(
          `${request.method} ${path} ${reply.status} ${(performance.now() - started).toFixed(1)}ms`,
        );
    });
}

/** API Gateway's answer to one request: its own error response, or the function's proxy result. */
async function handle(gateway: Gateway, request: IncomingMessage): Promise<Reply> {
  const requestId = randomUUID();
  const requestTimeEpoch = Date.now();
  const method = request.method ?? 'GET';
  const url = requestUrl(request);

  // The web ACL sits in front of API Gateway: it counts (and refuses) before anything else.
  const retryAfter = checkRateLimits(gateway, request, url.pathname);
  if (retryAfter) {
    request.resume();
    return rateLimitedResponse(requestId, retryAfter);
  }

  const body = await readBody(request, MAX_BODY_BYTES);
  if (body === undefined) return gatewayResponse('REQUEST_TOO_LARGE', requestId);

  const match = matchRoute(gateway.routes, method, url.pathname, requestId);
  if ('reply' in match) return match.reply;

  const incoming = readRequest(gateway, request, { requestId, requestTimeEpoch, method, url, ...match });
  let authorizer: Record<string, string | number> | undefined;
  if (match.route.authorized) {
    const allowed = await authorize(gateway, authorizerEvent(gateway, incoming), requestId);
    if ('reply' in allowed) return allowed.reply;
    authorizer = allowed.context;
    const wait = gateway.rateLimits?.checkEvaluation(url.pathname, String(authorizer.teamId ?? ''));
    if (wait) return rateLimitedResponse(requestId, wait);
  }
  return integrate(gateway, incoming, proxyEvent(incoming, body, authorizer));
}

function requestUrl(request: IncomingMessage): URL {
  const target = request.url ?? '/';
  // Prefixing keeps a path like `//x` a path; `new URL('//x', base)` would read x as a host.
  return target.startsWith('/') ? new URL(`http://localhost${target}`) : new URL(target, 'http://localhost');
}

/** Seconds until the caller may retry when the web ACL refuses the request; 0 or undefined when it passes. */
function checkRateLimits(gateway: Gateway, request: IncomingMessage, path: string): number | undefined {
  return gateway.rateLimits?.check({
    path,
    sourceIp: (request.socket.remoteAddress ?? '').replace(/^::ffff:/, ''),
    // Every value: Node keeps only the first of repeated Authorization headers in `headers`.
    headerValues: (name) => request.headersDistinct[name] ?? [],
  });
}

/** The route and its path parameters, or the gateway's reply when no route fits. */
function matchRoute(
  routes: RouteTable,
  method: string,
  path: string,
  requestId: string,
): { reply: Reply } | { route: GatewayRoute; pathParameters: Record<string, string> } {
  let match: ResourceMatch | undefined;
  try {
    match = routes.match(method, path);
  } catch (error) {
    if (error instanceof MalformedPathError)
      return { reply: gatewayResponse('BAD_REQUEST_PARAMETERS', requestId) };
    throw error;
  }
  const route = match?.route;
  if (match === undefined || route === undefined)
    return { reply: gatewayResponse('MISSING_AUTHENTICATION_TOKEN', requestId) };
  return { route, pathParameters: match.pathParameters };
}

/** The authorizer's context for the integration, or the gateway's reply when it does not allow. */
async function authorize(
  gateway: Gateway,
  event: APIGatewayRequestAuthorizerEvent,
  requestId: string,
): Promise<{ reply: Reply } | { context: Record<string, string | number> }> {
  const started = Date.now();
  let result: unknown;
  try {
    result = await gateway.invoke(gateway.authorizerEntry, event, randomUUID());
  } catch (error) {
    // Only this exact message makes API Gateway answer 401; anything else is its 500.
    if (error instanceof Error && error.message === 'Unauthorized')
      return { reply: gatewayResponse('UNAUTHORIZED', requestId) };
    gateway.log(`[gateway] authorizer failed on ${event.httpMethod} ${event.path}: ${describeError(error)}`);
    return { reply: gatewayResponse('AUTHORIZER_FAILURE', requestId) };
  }
  const verdict = readAuthorizerResult(result, event.methodArn);
  if (verdict.outcome === 'malformed') {
    gateway.log(
      `[gateway] malformed authorizer result on ${event.httpMethod} ${event.path}: ${JSON.stringify(result)}`,
    );
    return { reply: gatewayResponse('AUTHORIZER_CONFIGURATION_ERROR', requestId) };
  }
  if (verdict.outcome === 'deny')
    return { reply: gatewayResponse('ACCESS_DENIED', requestId, verdict.context) };
  return { context: { ...verdict.context, integrationLatency: Date.now() - started } };
}

/** Invokes the route's function with the proxy event; its reply, or the gateway's when it fails. */
async function integrate(
  gateway: Gateway,
  incoming: IncomingRequest,
  event: APIGatewayProxyEvent,
): Promise<Reply> {
  const { requestId, method, path, route } = incoming;
  let result: unknown;
  try {
    result = await gateway.invoke(route.entry, event, requestId);
  } catch (error) {
    gateway.log(`[gateway] ${route.entry} failed on ${method} ${path}: ${describeError(error)}`);
    const timedOut = error instanceof InvocationTimeoutError || error instanceof IntegrationTimeoutError;
    return gatewayResponse(timedOut ? 'INTEGRATION_TIMEOUT' : 'INTEGRATION_FAILURE', requestId);
  }
  const reply = proxyReply(result, requestId);
  if (reply === undefined) {
    gateway.log(
      `[gateway] malformed response from ${route.entry} on ${method} ${path}: ${JSON.stringify(result)}`,
    );
    return gatewayResponse('INTEGRATION_FAILURE', requestId);
  }
  return reply;
}

/** Statuses that carry no body in HTTP, hence no Content-Length. */
const NO_BODY = new Set([204, 304]);

function send(response: ServerResponse, reply: Reply): void {
  if (response.headersSent) {
    response.end();
    return;
  }
  // API Gateway answers with a Content-Length, not a chunked body.
  if (!NO_BODY.has(reply.status)) reply.headers['content-length'] = reply.body.length;
  response.writeHead(reply.status, reply.headers);
  response.end(reply.body);
}

/**
 * Reads the body; undefined once it passes `maxBytes`. The rest is still drained rather than
 * cut off, so the client reads the 413 instead of a reset connection.
 */
function readBody(request: IncomingMessage, maxBytes: number): Promise<Buffer | undefined> {
  // A request with neither Content-Length nor Transfer-Encoding has no body in HTTP/1.1, a GET
  // poll's case: no need to wait ticks for the stream's end. Resumed, the empty stream still ends.
  const { 'content-length': length, 'transfer-encoding': encoding } = request.headers;
  if (encoding === undefined && (length === undefined || length === '0')) {
    request.resume();
    return Promise.resolve(EMPTY_BODY);
  }
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
