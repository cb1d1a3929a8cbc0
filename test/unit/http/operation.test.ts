import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import { ConflictError } from '../../../lambdas/core/errors.ts';
import { operationHandler } from '../../../lambdas/http/operation.ts';
import { defineOperation } from '../../../lambdas/operations/declaration.ts';
import { pageQuery } from '../../../lambdas/operations/page-query.ts';

const principal = {
  principalId: 'user-1',
  userId: 'user-1',
  teamId: 'team-1',
  role: 'admin',
  method: 'api-token',
  tokenId: 'token-1',
};

function event(overrides: Partial<APIGatewayProxyEvent> = {}): APIGatewayProxyEvent {
  return {
    httpMethod: 'POST',
    path: '/widgets/w1',
    resource: '/widgets/{widgetId}',
    headers: {},
    multiValueHeaders: {},
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: { widgetId: 'w1' },
    stageVariables: null,
    body: JSON.stringify({ name: 'spanner' }),
    isBase64Encoded: false,
    requestContext: { authorizer: principal } as unknown as APIGatewayProxyEvent['requestContext'],
    ...overrides,
  };
}
const context = {
  functionName: 'test',
  awsRequestId: 'r-1',
  getRemainingTimeInMillis: () => 1000,
} as Context;

const renameWidget = defineOperation({
  name: 'rename-widget',
  method: 'POST',
  path: '/widgets/{widgetId}',
  summary: 'Rename a widget.',
  access: {},
  params: { widgetId: z.string().check(z.regex(/^w[0-9]+$/)) },
  query: { ...pageQuery, dryRun: { schema: z.optional(z.enum(['yes', 'no'])), description: 'Only check.' } },
  headers: {
    'x-trace': { schema: z.optional(z.string().check(z.maxLength(5))), description: 'A trace id.' },
  },
  body: { schema: z.strictObject({ name: z.string() }), required: true, example: { name: 'spanner' } },
  response: { status: 201, schema: z.object({ id: z.string(), name: z.string() }) },
  errors: [409],
});

describe('a handler built from its declaration', () => {
  it('parses exactly what the declaration lists and answers its success status', async () => {
    const seen: unknown[] = [];
    const handler = operationHandler(renameWidget, () => async (request) => {
      seen.push({
        params: request.params,
        query: request.query,
        headers: request.headers,
        body: request.body,
      });
      return { body: { id: request.params.widgetId, name: request.body.name } };
    });
    const result = await handler(
      event({ queryStringParameters: { limit: '5', other: 'ignored' }, headers: { 'X-Trace': 'abc' } }),
      context,
    );
    expect(result.statusCode).toBe(201);
    expect(JSON.parse(result.body)).toEqual({ id: 'w1', name: 'spanner' });
    expect(seen).toEqual([
      {
        params: { widgetId: 'w1' },
        query: { limit: 5 },
        headers: { 'x-trace': 'abc' },
        body: { name: 'spanner' },
      },
    ]);
  });

  it('answers 404 for a malformed path id, 400 naming a bad query or header, 400 for a missing required body', async () => {
    const handler = operationHandler(renameWidget, () => async () => ({ body: { id: 'x', name: 'y' } }));
    const answer = async (overrides: Partial<APIGatewayProxyEvent>) => {
      const result = await handler(event(overrides), context);
      return { status: result.statusCode, body: JSON.parse(result.body) };
    };
    expect(await answer({ pathParameters: { widgetId: '../etc' } })).toMatchObject({
      status: 404,
      body: { error: 'NOT_FOUND' },
    });
    expect(await answer({ queryStringParameters: { limit: '0' } })).toEqual({
      status: 400,
      body: { error: 'VALIDATION_ERROR', message: 'limit must be an integer from 1 to 100.' },
    });
    expect(await answer({ queryStringParameters: { dryRun: 'maybe' } })).toMatchObject({
      status: 400,
      body: { message: expect.stringContaining('dryRun') },
    });
    expect(await answer({ headers: { 'x-trace': 'far too long' } })).toMatchObject({
      status: 400,
      body: { message: expect.stringContaining('x-trace') },
    });
    expect(await answer({ body: null })).toEqual({
      status: 400,
      body: { error: 'VALIDATION_ERROR', message: 'A JSON request body is required.' },
    });
  });

  it('refuses a request without the authorizer’s caller unless the operation is public', async () => {
    const handler = operationHandler(renameWidget, () => async () => ({ body: { id: 'x', name: 'y' } }));
    const result = await handler(
      event({ requestContext: {} as APIGatewayProxyEvent['requestContext'] }),
      context,
    );
    expect(result.statusCode).toBe(401);
    const open = defineOperation({ ...renameWidget, public: 'A test of a public operation.' });
    const publicHandler = operationHandler(open, () => async (request) => ({
      body: { id: String(request.principal), name: 'y' },
    }));
    const publicResult = await publicHandler(
      event({ requestContext: {} as APIGatewayProxyEvent['requestContext'] }),
      context,
    );
    expect(JSON.parse(publicResult.body)).toEqual({ id: 'undefined', name: 'y' });
  });

  it('maps a domain error to its status and never answers a status the declaration does not list', async () => {
    const conflicting = operationHandler(renameWidget, () => async () => {
      throw new ConflictError('The widget was renamed meanwhile.');
    });
    const conflict = await conflicting(event(), context);
    expect(conflict.statusCode).toBe(409);
    const teapot = operationHandler(renameWidget, () => async () => ({
      raw: { statusCode: 418, headers: {}, body: 'teapot' },
    }));
    const refused = await teapot(event(), context);
    expect(refused.statusCode).toBe(500);
    expect(JSON.parse(refused.body)).toEqual({ error: 'INTERNAL_ERROR', message: expect.any(String) });
  });

  it('builds its implementation once and only when first asked, outside Lambda', async () => {
    let builds = 0;
    const handler = operationHandler(renameWidget, () => {
      builds += 1;
      return async () => ({ body: { id: 'x', name: 'y' } });
    });
    expect(builds).toBe(0);
    await handler(event(), context);
    await handler(event(), context);
    expect(builds).toBe(1);
  });
});
