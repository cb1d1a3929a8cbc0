import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, SQSEvent } from 'aws-lambda';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { generateApiToken, hashApiToken, tokenHint } from '../../../lambdas/auth/api-token.ts';
import { makeAuthenticate } from '../../../lambdas/auth/authenticate.ts';
import { CSRF_REFUSALS } from '../../../lambdas/auth/csrf.ts';
import { makeStartSession } from '../../../lambdas/auth/sessions.ts';
import { DEFAULT_LIMITS } from '../../../lambdas/limits.ts';
import { evaluationPaths } from '../../../lambdas/operations/declaration.ts';
import { OPERATIONS } from '../../../lambdas/operations/index.ts';
import { localRoutes } from '../../../local/functions.ts';
import type { GatewayRoute } from '../../../local/gateway/routing.ts';

const ROUTES = localRoutes();

import { GATEWAY_ERRORS, RATE_LIMITED_BODY } from '../../../lib/gateway-errors.ts';
import { LocalRateLimits } from '../../../local/gateway/rate-limit.ts';
import {
  type Invoke,
  type LocalGateway,
  MAX_BODY_BYTES,
  startLocalGateway,
} from '../../../local/gateway/server.ts';
import { startSqsEndpoint } from '../../../local/queue/endpoint.ts';
import { startEventSource } from '../../../local/queue/event-source.ts';
import { LocalQueue } from '../../../local/queue/queue.ts';
import { type FakeFunctions, startFakeFunctions } from '../../support/local-functions.ts';
import { waitFor } from '../../support/wait.ts';
import {
  FakeAuthRepository,
  FakeClock,
  RecordingAudit,
  seedMember,
  sequentialIds,
  signingKey,
  T0,
} from '../../unit/auth/fakes.ts';

const TEST_ROUTES: GatewayRoute[] = [
  { method: 'GET', path: '/items/{itemId}', entry: 'echo', authorized: false },
  { method: 'POST', path: '/items', entry: 'echo', authorized: true },
  { method: 'GET', path: '/items/{itemId}/parts/{partId}', entry: 'echo', authorized: true },
  { method: 'GET', path: '/boom', entry: 'throws', authorized: false },
  { method: 'GET', path: '/broken', entry: 'malformed', authorized: false },
  { method: 'POST', path: '/jobs', entry: 'enqueue', authorized: false },
  { method: 'GET', path: '/slow', entry: 'slow', authorized: false },
  { method: 'GET', path: '/exits', entry: 'exits', authorized: false },
  { method: 'GET', path: '/files/{proxy+}', entry: 'echo', authorized: false },
  { method: 'GET', path: '/files/index', entry: 'throws', authorized: false },
];

/**
 * A request with exactly these header lines, in order: fetch joins repeated headers into one and
 * drops some names, and an object literal cannot hold a key named `__proto__`.
 */
function rawRequest(
  url: string,
  headers: Array<[string, string | string[]]>,
  method = 'GET',
): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(url, { method }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        }),
      );
    });
    outgoing.on('error', reject);
    for (const [name, value] of headers) outgoing.setHeader(name, value);
    outgoing.end();
  });
}

/** The headers API Gateway's own answers carry, as the stack configures them. */
const GATEWAY_ANSWER_HEADERS = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'strict-transport-security': 'max-age=31536000; includeSubDomains',
};

function gatewayBody(type: string) {
  const configured = GATEWAY_ERRORS.find((candidate) => candidate.type === type);
  return { error: configured?.error, message: configured?.message };
}

interface Echo {
  event: APIGatewayProxyEvent;
  context: { functionName: string; awsRequestId: string; remainingTimeMs: number };
}

describe('startLocalGateway in front of local functions', () => {
  let gateway: LocalGateway;
  let functions: FakeFunctions;
  const logLines: string[] = [];

  beforeAll(async () => {
    functions = await startFakeFunctions([
      { entry: 'echo' },
      { entry: 'authorize' },
      { entry: 'throws' },
      { entry: 'malformed' },
      { entry: 'slow', timeoutMs: 300 },
      { entry: 'exits' },
    ]);
    gateway = await startLocalGateway({
      port: 0,
      routes: TEST_ROUTES,
      authorizerEntry: 'authorize',
      invoke: functions.invoke,
      log: (line) => logLines.push(line),
    });
  });
  afterAll(async () => {
    await gateway.stop();
    await functions.stop();
  });

  const call = (path: string, init: RequestInit = {}) => fetch(`${gateway.url}${path}`, init);
  const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });

  it('serves on 127.0.0.1 and builds an API Gateway REST proxy event for a matched route', async () => {
    const response = await call('/items/caf%C3%A9%2F1?tag=a&tag=b&single=x%20y', {
      headers: { 'X-Custom': 'yes', 'User-Agent': 'vitest' },
    });
    const { event, context } = (await response.json()) as Echo;

    expect(gateway.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(response.status).toBe(200);
    expect(event).toMatchObject({
      resource: '/items/{itemId}',
      path: '/items/caf%C3%A9%2F1',
      httpMethod: 'GET',
      pathParameters: { itemId: 'café/1' },
      queryStringParameters: { tag: 'b', single: 'x y' },
      multiValueQueryStringParameters: { tag: ['a', 'b'], single: ['x y'] },
      stageVariables: null,
      body: null,
      isBase64Encoded: false,
      headers: { 'X-Custom': 'yes' },
      multiValueHeaders: { 'X-Custom': ['yes'] },
      requestContext: {
        stage: 'local',
        path: '/items/caf%C3%A9%2F1',
        resourcePath: '/items/{itemId}',
        httpMethod: 'GET',
        requestId: response.headers.get('x-amzn-requestid'),
        identity: { sourceIp: '127.0.0.1', userAgent: 'vitest' },
        protocol: 'HTTP/1.1',
      },
    });
    expect(event.requestContext.requestTimeEpoch).toEqual(expect.any(Number));
    expect(event.requestContext.resourceId).toMatch(/^[0-9a-z]{6}$/);
    expect(event.requestContext).not.toHaveProperty('authorizer');
    expect(context.functionName).toBe('test-echo');
    expect(context.awsRequestId).toBe(event.requestContext.requestId);
    expect(context.remainingTimeMs).toBeGreaterThan(0);
  });

  it('writes the handler’s status, headers and multi-value headers', async () => {
    const response = await call('/items/1');

    expect(response.headers.get('x-handler')).toBe('echo');
    expect(response.headers.getSetCookie()).toEqual(['a=1; HttpOnly', 'b=2; HttpOnly']);
    expect(response.headers.get('x-amzn-requestid')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('answers with a Content-Length, as API Gateway does, not a chunked body', async () => {
    const handler = await rawRequest(`${gateway.url}/items/1`, []);
    const own = await rawRequest(`${gateway.url}/nowhere`, []);

    for (const response of [handler, own]) {
      expect(response.headers['transfer-encoding']).toBeUndefined();
      expect(Number(response.headers['content-length'])).toBe(Buffer.byteLength(response.body));
      expect(Buffer.byteLength(response.body)).toBeGreaterThan(0);
    }
  });

  it('gives null query and path parameters when there are none, and passes the body as a string', async () => {
    const response = await call('/items', { method: 'POST', body: '{"name":"x"}', ...bearer('allow') });
    const { event } = (await response.json()) as Echo;

    expect(response.status).toBe(200);
    expect(event.queryStringParameters).toBeNull();
    expect(event.multiValueQueryStringParameters).toBeNull();
    expect(event.pathParameters).toBeNull();
    expect(event.body).toBe('{"name":"x"}');
  });

  it('answers 404 NOT_FOUND for an unknown path and for a known path with another method', async () => {
    const unknown = await call('/nowhere');
    const wrongMethod = await call('/items/1', { method: 'DELETE' });

    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual(gatewayBody('MISSING_AUTHENTICATION_TOKEN'));
    expect(wrongMethod.status).toBe(404);
    expect(await wrongMethod.json()).toMatchObject({ error: 'NOT_FOUND' });
  });

  it('answers 413 PAYLOAD_TOO_LARGE for a body over 10 MB', async () => {
    const response = await call('/items', {
      method: 'POST',
      body: 'x'.repeat(MAX_BODY_BYTES + 1),
      ...bearer('allow'),
    });

    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({ error: 'PAYLOAD_TOO_LARGE', message: expect.any(String) });
  });

  it('answers 401 UNAUTHORIZED when the authorizer throws Unauthorized', async () => {
    const missing = await call('/items/1/parts/2');
    const invalid = await call('/items/1/parts/2', bearer('wrong'));

    expect(missing.status).toBe(401);
    expect(await missing.json()).toEqual(gatewayBody('UNAUTHORIZED'));
    expect(invalid.status).toBe(401);
  });

  it('answers 403 FORBIDDEN on an explicit Deny and on an Allow for another method ARN', async () => {
    const denied = await call('/items/1/parts/2', bearer('deny'));
    const otherMethod = await call('/items/1/parts/2', bearer('other-method'));

    expect(denied.status).toBe(403);
    expect(await denied.json()).toEqual({ error: 'FORBIDDEN', message: expect.any(String) });
    expect(otherMethod.status).toBe(403);
    expect(await otherMethod.json()).toMatchObject({ error: 'FORBIDDEN' });
  });

  it('evaluates * and ? wildcards in the policy’s Resource', async () => {
    const allowed = await call('/items/1/parts/2', bearer('wildcard'));
    const otherMethod = await call('/items', { method: 'POST', body: '{}', ...bearer('wildcard') });

    expect(allowed.status).toBe(200);
    expect(otherMethod.status).toBe(403);
  });

  it('passes the authorizer’s principalId and context, as strings, to event.requestContext.authorizer', async () => {
    const response = await call('/items/7/parts/8', bearer('allow'));
    const { event } = (await response.json()) as Echo;

    expect(response.status).toBe(200);
    expect(event.pathParameters).toEqual({ itemId: '7', partId: '8' });
    expect(event.requestContext.authorizer).toMatchObject({
      principalId: 'user-1',
      teamId: 'team-1',
      role: 'admin',
      quota: '3',
      admin: 'true',
    });
  });

  it.each(['crash', 'malformed', 'nested-context'])(
    'answers 500 INTERNAL_ERROR without internals when the authorizer fails (%s)',
    async (token) => {
      const response = await call('/items/1/parts/2', bearer(token));
      const text = await response.text();

      expect(response.status).toBe(500);
      expect(JSON.parse(text)).toEqual(gatewayBody('DEFAULT_5XX'));
      expect(text).not.toMatch(/secret|at .*\.ts|Error/);
    },
  );

  it('answers 502 INTERNAL_ERROR without a stack trace when a handler throws or answers garbage', async () => {
    const thrown = await call('/boom');
    const thrownText = await thrown.text();
    const malformed = await call('/broken');

    expect(thrown.status).toBe(502);
    expect(JSON.parse(thrownText)).toEqual({ error: 'INTERNAL_ERROR', message: expect.any(String) });
    expect(thrownText).not.toMatch(/secret|at .*\.ts|Error/);
    expect(malformed.status).toBe(502);
    expect(await malformed.json()).toMatchObject({ error: 'INTERNAL_ERROR' });
    // The developer still finds the cause in the log.
    expect(logLines.join('\n')).toContain('secret internals');
  });

  it('serves sequential requests from one warm environment of the function', async () => {
    const pids = new Set<number | undefined>();
    for (const item of ['a', 'b', 'c']) {
      await call(`/items/${item}`);
      pids.add(functions.functions.get('echo')?.environmentPids()[0]);
    }

    expect(pids.size).toBe(1);
  });

  it('ends a function past its timeout and answers 504 with the gateway’s error body', async () => {
    const response = await call('/slow');

    expect(response.status).toBe(504);
    expect(await response.json()).toEqual(gatewayBody('DEFAULT_5XX'));
    expect(logLines.join('\n')).toContain('Task timed out after 0.30 seconds');
    expect(functions.functions.get('slow')?.environmentPids()).toEqual([]);
  });

  it('survives a handler that ends its own process: 502 for that request, the gateway serves the next', async () => {
    const exited = await call('/exits');
    const next = await call('/items/after-exit');

    expect(exited.status).toBe(502);
    expect(await exited.json()).toEqual({ error: 'INTERNAL_ERROR', message: expect.any(String) });
    expect(logLines.join('\n')).toContain('Runtime exited with error: exit status 1');
    expect(next.status).toBe(200);
    // The next request to the function that exited starts a new environment.
    expect((await call('/exits')).status).toBe(502);
  });

  it('gives a greedy {proxy+} the rest of the path, and prefers a literal resource to it', async () => {
    const nested = await call('/files/css/app%20main.css');
    const literal = await call('/files/index');

    expect(nested.status).toBe(200);
    const { event } = (await nested.json()) as Echo;
    expect(event.resource).toBe('/files/{proxy+}');
    expect(event.pathParameters).toEqual({ proxy: 'css/app main.css' });
    expect(literal.status).toBe(502);
  });

  it('answers oversized headers with a 4xx, never reaching a function', async () => {
    const response = await call('/items/a', { headers: { 'x-big': 'x'.repeat(20_000) } });

    expect(response.status).toBe(431);
  });

  it.each([
    ['an unauthorized', '/items/1'],
    ['an authorized', '/items/1/parts/2'],
  ])(
    'passes headers and query parameters named like Object’s own properties on %s route',
    async (_, path) => {
      const names = ['constructor', 'toString', 'hasOwnProperty', '__proto__'];
      const query = names.map((name, index) => `${name}=q${index}`).join('&');

      const response = await rawRequest(`${gateway.url}${path}?${query}`, [
        ['authorization', 'Bearer allow'],
        ...names.map((name, index): [string, string] => [name, `h${index}`]),
      ]);

      expect(response.status).toBe(200);
      const { event } = JSON.parse(response.body) as Echo;
      for (const [index, name] of names.entries()) {
        expect(Object.getOwnPropertyDescriptor(event.headers, name)?.value).toBe(`h${index}`);
        expect(Object.getOwnPropertyDescriptor(event.multiValueHeaders, name)?.value).toEqual([`h${index}`]);
        expect(Object.getOwnPropertyDescriptor(event.queryStringParameters, name)?.value).toBe(`q${index}`);
        expect(Object.getOwnPropertyDescriptor(event.multiValueQueryStringParameters, name)?.value).toEqual([
          `q${index}`,
        ]);
      }
    },
  );

  it('passes every value of a repeated header in multiValueHeaders and the last in headers, as API Gateway does', async () => {
    const response = await rawRequest(`${gateway.url}/items/1`, [['X-Twice', ['first', 'second']]]);
    const { event } = JSON.parse(response.body) as Echo;

    expect(event.headers['X-Twice']).toBe('second');
    expect(event.multiValueHeaders['X-Twice']).toEqual(['first', 'second']);
  });

  it('answers its own errors with a Bearer challenge on 401, HSTS, nosniff and no-store', async () => {
    const unauthorized = await call('/items/1/parts/2', bearer('wrong'));
    const notFound = await call('/nowhere');

    expect(unauthorized.status).toBe(401);
    expect(unauthorized.headers.get('www-authenticate')).toBe('Bearer');
    for (const response of [unauthorized, notFound]) {
      for (const [name, value] of Object.entries(GATEWAY_ANSWER_HEADERS))
        expect(response.headers.get(name), name).toBe(value);
    }
    expect(notFound.headers.get('www-authenticate')).toBeNull();
  });

  it('logs one line per request with method, path, status and duration', async () => {
    await call('/items/logged?token=secret-one-time');

    expect(logLines).toContainEqual(expect.stringMatching(/^GET \/items\/logged 200 [\d.]+ms$/));
    expect(logLines.join('\n')).not.toContain('secret-one-time');
  });
});

describe('startLocalGateway with the project’s operations', () => {
  const seen: APIGatewayProxyEvent[] = [];
  const echo = async (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => {
    seen.push(event);
    return { statusCode: 200, body: JSON.stringify({ resource: event.resource }) };
  };
  const allowAll = async (event: { methodArn: string }) => ({
    principalId: 'p',
    policyDocument: {
      Version: '2012-10-17',
      Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: event.methodArn }],
    },
  });
  let gateway: LocalGateway;

  beforeAll(async () => {
    // Routing only: the functions are in-process stand-ins here.
    const invoke: Invoke = async (entry, event) =>
      entry === 'authorize' ? allowAll(event as { methodArn: string }) : echo(event as APIGatewayProxyEvent);
    gateway = await startLocalGateway({
      port: 0,
      routes: ROUTES,
      authorizerEntry: 'authorize',
      invoke,
      quiet: true,
    });
  });
  afterAll(async () => {
    await gateway.stop();
  });

  it.each(ROUTES.map((route) => [route.method, route.path, route]))('serves %s %s', async (_, __, route) => {
    const path = route.path.replace(/\{(\w+)\}/g, (_match, name: string) => `sample-${name}`);

    const response = await fetch(`${gateway.url}${path}`, {
      method: route.method,
      ...(route.method === 'POST' ? { body: '{}' } : {}),
    });

    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ resource: route.path });
    const event = seen.at(-1);
    expect(event?.requestContext.authorizer?.principalId).toBe(route.authorized ? 'p' : undefined);
  });
});

describe('per-caller rate limits (the web ACL of the stack)', () => {
  it('answers 429 RATE_LIMITED with Retry-After to a credential past its burst, not to others; per IP on /auth/*', async () => {
    const limits = {
      ...DEFAULT_LIMITS,
      requestsPerSecondPerCredential: 1,
      burstPerCredential: 3,
      authRequestsPerMinutePerIp: 2,
    };
    const invoke: Invoke = async (entry, event) =>
      entry === 'authorize'
        ? {
            principalId: 'p',
            policyDocument: {
              Version: '2012-10-17',
              Statement: [
                {
                  Action: 'execute-api:Invoke',
                  Effect: 'Allow',
                  Resource: (event as { methodArn: string }).methodArn,
                },
              ],
            },
          }
        : { statusCode: 200, body: '{}' };
    const gateway = await startLocalGateway({
      port: 0,
      routes: ROUTES,
      authorizerEntry: 'authorize',
      invoke,
      quiet: true,
      rateLimits: new LocalRateLimits(limits, evaluationPaths(OPERATIONS)),
    });
    try {
      const get = (token: string) =>
        fetch(`${gateway.url}/me`, { headers: { authorization: `Bearer ${token}` } });
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push((await get('busy')).status);
      const refused = await get('busy');
      const login = () => fetch(`${gateway.url}/auth/login`, { method: 'POST', body: '{}' });

      expect(statuses).toEqual([200, 200, 200, 429]);
      expect(refused.status).toBe(429);
      expect(await refused.json()).toEqual(RATE_LIMITED_BODY);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect((await get('quiet')).status).toBe(200);
      expect([(await login()).status, (await login()).status, (await login()).status]).toEqual([
        200, 200, 429,
      ]);
    } finally {
      await gateway.stop();
    }
  });
});

describe('per-caller rate limits, keyed on the credential rather than its spelling', () => {
  const allowAll: Invoke = async (entry, event) =>
    entry === 'authorize'
      ? {
          principalId: 'p',
          policyDocument: {
            Version: '2012-10-17',
            Statement: [
              {
                Action: 'execute-api:Invoke',
                Effect: 'Allow',
                Resource: (event as { methodArn: string }).methodArn,
              },
            ],
          },
        }
      : { statusCode: 200, body: '{}' };
  let gateway: LocalGateway;

  beforeAll(async () => {
    gateway = await startLocalGateway({
      port: 0,
      routes: ROUTES,
      authorizerEntry: 'authorize',
      invoke: allowAll,
      quiet: true,
      rateLimits: new LocalRateLimits(
        { ...DEFAULT_LIMITS, requestsPerSecondPerCredential: 0.001, burstPerCredential: 3 },
        evaluationPaths(OPERATIONS),
      ),
    });
  });
  afterAll(async () => {
    await gateway.stop();
  });

  const statuses = async (authorizations: string[]) => {
    const seen: number[] = [];
    for (const authorization of authorizations)
      seen.push((await rawRequest(`${gateway.url}/me`, [['authorization', authorization]])).status);
    return seen;
  };

  it('gives one bucket to a token however Bearer is spelled and spaced', async () => {
    expect(
      await statuses(['Bearer spelled', 'bearer spelled', 'BEARER   spelled', 'Bearer spelled  ']),
    ).toEqual([200, 200, 200, 429]);
  });

  it('gives one bucket to a header without a token whatever its case and spacing', async () => {
    expect(await statuses(['Token  ABC', 'token abc', 'TOKEN\tabc', 'token   ABC'])).toEqual([
      200, 200, 200, 429,
    ]);
  });

  it('gives one bucket to the session cookie however the Cookie header spells it', async () => {
    const seen: number[] = [];
    for (const cookie of [
      'ps_session=pss_c.d',
      'theme=x; ps_session="pss_c.d"',
      'ps_session=pss_c.d ',
      'a=b;ps_session=pss_c.d',
    ])
      seen.push((await rawRequest(`${gateway.url}/me`, [['cookie', cookie]])).status);

    expect(seen).toEqual([200, 200, 200, 429]);
  });

  it('keys repeated Authorization headers on all of them, not on the first', async () => {
    // The authorizer refuses such a request (401); the limiter must not charge only the first token.
    const repeated = await rawRequest(`${gateway.url}/me`, [
      ['authorization', ['Bearer first', 'Bearer other']],
    ]);
    const first = await statuses(['Bearer first', 'Bearer first', 'Bearer first']);

    expect(repeated.status).toBe(200);
    expect(first).toEqual([200, 200, 200]);
  });
});

describe('the project’s authorizer behind the local gateway', () => {
  let gateway: LocalGateway;
  let apiToken: string;
  let accessToken: string;

  beforeAll(async () => {
    // The module builds its production handler on import; these only have to name a table.
    process.env.AUTH_TABLE ??= 'auth-unit';
    process.env.EVALUATION_ROUTES ??= '[]';
    process.env.EVALUATION_FALLBACK_KEY ??= 'shared-evaluations-key-of-the-test';
    process.env.AWS_REGION ??= 'us-east-1';
    const { makeAuthorizer } = await import('../../../lambdas/handlers/authorize.ts');
    const repo = new FakeAuthRepository();
    const clock = new FakeClock();
    const audit = new RecordingAudit();
    const user = await seedMember(repo);
    apiToken = generateApiToken();
    await repo.createApiToken({
      tokenId: 'token-1',
      tokenHash: hashApiToken(apiToken),
      userId: user.userId,
      teamId: 'team-a',
      name: 'ci',
      hint: tokenHint(apiToken),
      createdAt: T0,
      expiresAt: null,
      revokedAt: null,
    });
    ({ accessToken } = await makeStartSession({ auth: repo, clock, ids: sequentialIds(), signingKey, audit })(
      user,
      'password',
    ));
    const authorize = makeAuthorizer(
      makeAuthenticate({ auth: repo, clock, signingKey, audit }),
      async () => undefined,
    );
    // In process, like API Gateway's JSON: what the functions receive is what they would on AWS.
    const invoke: Invoke = async (entry, event) => {
      const received = JSON.parse(JSON.stringify(event));
      return entry === 'authorize' ? authorize(received) : { statusCode: 200, body: '{}' };
    };
    gateway = await startLocalGateway({
      port: 0,
      routes: ROUTES,
      authorizerEntry: 'authorize',
      invoke,
      quiet: true,
    });
  });
  afterAll(async () => {
    await gateway.stop();
  });

  it('answers 401 with a Bearer challenge to two Authorization headers, even when the last is valid', async () => {
    const one = await rawRequest(`${gateway.url}/me`, [['authorization', `Bearer ${apiToken}`]]);
    const two = await rawRequest(`${gateway.url}/me`, [
      ['authorization', ['Bearer psa_not-mine', `Bearer ${apiToken}`]],
    ]);

    expect(one.status).toBe(200);
    expect(two.status).toBe(401);
    expect(JSON.parse(two.body)).toEqual(gatewayBody('UNAUTHORIZED'));
    expect(two.headers['www-authenticate']).toBe('Bearer');
  });

  it('answers a cookie request the CSRF rule refuses with 403 naming the rule and what to send', async () => {
    const response = await rawRequest(
      `${gateway.url}/pipelines`,
      [
        ['cookie', `ps_session=${accessToken}`],
        ['content-type', 'text/plain'],
      ],
      'POST',
    );

    expect(response.status).toBe(403);
    expect(JSON.parse(response.body)).toEqual({
      error: 'FORBIDDEN',
      message: CSRF_REFUSALS.notJson('text/plain'),
    });
    expect(response.headers).toMatchObject(GATEWAY_ANSWER_HEADERS);
  });
});

describe('the local stack’s pieces together', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
  });

  it('a handler’s unchanged SQSClient, pointed by AWS_ENDPOINT_URL_SQS, queues a job the worker receives', async () => {
    const jobs = new LocalQueue({ name: 'synthesis-jobs', visibilityTimeoutMs: 1_000 });
    const received: string[] = [];
    const worker = startEventSource(
      jobs,
      async (event: SQSEvent) => {
        for (const record of event.Records) received.push(record.body);
      },
      { batchSize: 10, functionName: 'worker', log: () => {} },
    );
    const sqs = await startSqsEndpoint({ 'synthesis-jobs': jobs });
    const functions = await startFakeFunctions([
      {
        entry: 'enqueue',
        environment: {
          AWS_ENDPOINT_URL_SQS: sqs.endpoint,
          AWS_ACCESS_KEY_ID: 'local',
          AWS_SECRET_ACCESS_KEY: 'local',
          QUEUE_URL: sqs.queueUrl('synthesis-jobs'),
        },
      },
    ]);
    const gateway = await startLocalGateway({
      port: 0,
      routes: TEST_ROUTES,
      authorizerEntry: 'authorize',
      invoke: functions.invoke,
      quiet: true,
    });
    cleanups.push(
      () => gateway.stop(),
      () => worker.stop(),
      () => sqs.stop(),
      () => functions.stop(),
    );

    const response = await fetch(`${gateway.url}/jobs`, { method: 'POST', body: '{"runId":"r1"}' });
    await waitFor(() => received.length === 1, 'the job');

    expect(response.status).toBe(202);
    expect(received).toEqual(['{"runId":"r1"}']);
  });
});
