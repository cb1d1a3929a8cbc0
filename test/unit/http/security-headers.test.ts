import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { NotFoundError, UnauthorizedError } from '../../../lambdas/core/errors.ts';
import { httpHandler } from '../../../lambdas/http/handler.ts';
import { json, noContent } from '../../../lambdas/http/response.ts';
import { makeServeApp } from '../../../lambdas/http/serve-app.ts';
import { handler as magicLinkPage } from '../../../lambdas/operations/show-magic-link-page.ts';

// The headers a browser acts on: HSTS on every answer, and RFC 6750's challenge on a handler's 401.

const HSTS = 'max-age=31536000; includeSubDomains';

function event(headers: Record<string, string> = {}, path = '/auth/login'): APIGatewayProxyEvent {
  return {
    httpMethod: 'POST',
    path,
    resource: path,
    headers,
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, [value]])),
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: null,
    stageVariables: null,
    body: null,
    isBase64Encoded: false,
    requestContext: { path, stage: 'prod' } as APIGatewayProxyEvent['requestContext'],
  };
}
const context = {
  functionName: 'test',
  awsRequestId: 'r-1',
  getRemainingTimeInMillis: () => 1000,
} as Context;

/** A handler that refuses every request with `error`, through the shared middleware. */
const refusing = (error: Error) =>
  httpHandler(async () => {
    throw error;
  });
const lowerCased = (result: APIGatewayProxyResult) =>
  Object.fromEntries(
    Object.entries(result.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]),
  );

describe('a handler’s 401', () => {
  const refuse = refusing(new UnauthorizedError('The email or password is incorrect.'));

  it('challenges with Bearer, and no error code, when the request carried no token', async () => {
    const result = await refuse(event({ 'content-type': 'application/json' }), context);

    expect(result.statusCode).toBe(401);
    expect(lowerCased(result)['www-authenticate']).toBe('Bearer');
  });

  it.each([
    ['an Authorization header', { Authorization: 'Bearer psa_x' }],
    ['the session cookie', { Cookie: 'theme=dark; ps_session=pss_x.y' }],
    ['the refresh cookie', { cookie: 'ps_refresh=psr_x' }],
  ])('says error="invalid_token" when the request carried %s', async (_, headers) => {
    const result = await refuse(event(headers), context);

    expect(lowerCased(result)['www-authenticate']).toBe('Bearer error="invalid_token"');
  });

  it('is the only status that challenges', async () => {
    const result = await refusing(new NotFoundError('No such run.'))(
      event({ Authorization: 'Bearer x' }),
      context,
    );

    expect(result.statusCode).toBe(404);
    expect(lowerCased(result)).not.toHaveProperty('www-authenticate');
  });
});

describe('Strict-Transport-Security', () => {
  it('is on every JSON answer, empty answer and error', async () => {
    const answers = [
      json(200, {}),
      noContent(),
      await refusing(new UnauthorizedError())(event(), context),
      await refusing(new Error('internal'))(event(), context),
    ];

    for (const answer of answers) expect(lowerCased(answer)['strict-transport-security']).toBe(HSTS);
  });

  it('is on the review application’s shell, assets and redirect', () => {
    const serveApp = makeServeApp({
      files: { 'assets/a.js': { contentType: 'text/javascript', body: '1', integrity: 'sha384-x' } },
      scripts: ['assets/a.js'],
      styles: [],
    });
    const get = (path: string, proxy?: string) => ({
      ...event({}, path),
      httpMethod: 'GET',
      pathParameters: proxy === undefined ? null : { proxy },
    });

    for (const answer of [
      serveApp(get('/app')),
      serveApp(get('/app/', '')),
      serveApp(get('/app/assets/a.js', 'assets/a.js')),
    ])
      expect(lowerCased(answer)['strict-transport-security']).toBe(HSTS);
  });

  it('is on the page a magic link opens', async () => {
    const result = await magicLinkPage({ ...event({}, '/auth/magic-link'), httpMethod: 'GET' }, context);

    expect(result.statusCode).toBe(200);
    expect(lowerCased(result)['strict-transport-security']).toBe(HSTS);
  });
});
