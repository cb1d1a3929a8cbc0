/** GET /openapi.json's servers: the origin the document was fetched from first, then the generic ones. */
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { handler, requestOrigin } from '../../../lambdas/operations/get-openapi.ts';
import { OPERATIONS } from '../../../lambdas/operations/index.ts';
import { buildOpenApiDocument } from '../../../lambdas/operations/openapi.ts';

function event(
  headers: Record<string, string>,
  paths: { path?: string; contextPath?: string; domainName?: string } = {},
): APIGatewayProxyEvent {
  const path = paths.path ?? '/openapi.json';
  return {
    httpMethod: 'GET',
    path,
    resource: '/openapi.json',
    headers,
    multiValueHeaders: {},
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: null,
    stageVariables: null,
    body: null,
    isBase64Encoded: false,
    requestContext: {
      path: paths.contextPath ?? path,
      ...(paths.domainName ? { domainName: paths.domainName } : {}),
    } as unknown as APIGatewayProxyEvent['requestContext'],
  };
}
const context = {
  functionName: 'get-openapi',
  awsRequestId: 'r-1',
  getRemainingTimeInMillis: () => 1000,
} as Context;

const serversOf = async (request: APIGatewayProxyEvent) => {
  const result = await handler(request, context);
  return { result, servers: (JSON.parse(result.body) as { servers: Array<{ url: string }> }).servers };
};

describe('GET /openapi.json servers', () => {
  it('lists the local stack’s own origin, with its real port, first', async () => {
    const { result, servers } = await serversOf(
      event({ Host: '127.0.0.1:45123', 'X-Forwarded-Proto': 'http' }),
    );

    expect(result.statusCode).toBe(200);
    expect(servers[0]).toEqual({
      url: 'http://127.0.0.1:45123',
      description: 'The API this document was fetched from.',
    });
    expect(servers.slice(1).map((server) => server.url)).toEqual([
      'https://{restApiId}.execute-api.{region}.amazonaws.com/{stage}',
      'http://127.0.0.1:3000',
    ]);
    expect(result.headers?.vary).toBe('Host, X-Forwarded-Proto');
  });

  it('lists a deployed stage with its scheme and stage path, then the generic servers', async () => {
    const { servers } = await serversOf(
      event(
        { host: 'abc123.execute-api.eu-west-1.amazonaws.com', 'x-forwarded-proto': 'https' },
        { contextPath: '/prod/openapi.json' },
      ),
    );

    expect(servers.map((server) => server.url)).toEqual([
      'https://abc123.execute-api.eu-west-1.amazonaws.com/prod',
      'https://{restApiId}.execute-api.{region}.amazonaws.com/{stage}',
      'http://127.0.0.1:3000',
    ]);
  });

  it('does not list the local default twice when the stack runs on it', async () => {
    const { servers } = await serversOf(event({ Host: '127.0.0.1:3000', 'X-Forwarded-Proto': 'http' }));

    expect(servers.map((server) => server.url)).toEqual([
      'http://127.0.0.1:3000',
      'https://{restApiId}.execute-api.{region}.amazonaws.com/{stage}',
    ]);
  });

  it('keeps the generic list for a Host no URL can hold', async () => {
    const forged = await serversOf(event({ Host: 'evil.example/"><script>', 'X-Forwarded-Proto': 'http' }));

    expect(forged.servers).toEqual(buildOpenApiDocument(OPERATIONS).servers);
  });
});

describe('requestOrigin', () => {
  it('reads the gateway’s X-Forwarded-Proto, the last one sent, and defaults to https', () => {
    expect(
      requestOrigin(event({ host: 'api.test', 'x-forwarded-proto': 'https', 'X-Forwarded-Proto': 'http' })),
    ).toBe('http://api.test');
    expect(requestOrigin(event({ Host: 'api.test' }))).toBe('https://api.test');
    expect(requestOrigin(event({ Host: 'api.test', 'X-Forwarded-Proto': 'gopher' }))).toBe(
      'https://api.test',
    );
  });

  it('falls back to the domain name API Gateway gives, and accepts a bracketed IPv6 host', () => {
    expect(requestOrigin(event({}, { domainName: 'api.test' }))).toBe('https://api.test');
    expect(requestOrigin(event({ Host: '[::1]:3000', 'X-Forwarded-Proto': 'http' }))).toBe(
      'http://[::1]:3000',
    );
    expect(requestOrigin(event({}))).toBeUndefined();
  });
});

describe('the static document (the typed client’s source)', () => {
  it('keeps the generic servers only', () => {
    expect(
      (buildOpenApiDocument(OPERATIONS).servers as Array<{ url: string }>).map((server) => server.url),
    ).toEqual(['https://{restApiId}.execute-api.{region}.amazonaws.com/{stage}', 'http://127.0.0.1:3000']);
  });
});
