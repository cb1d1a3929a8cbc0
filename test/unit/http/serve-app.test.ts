import type { APIGatewayProxyEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { type AppAssets, appShell, makeServeApp } from '../../../lambdas/http/serve-app.ts';

/** What web/build.ts makes, small: one script and one stylesheet with their integrity. */
const ASSETS: AppAssets = {
  files: {
    'assets/main-ABC123.js': {
      contentType: 'text/javascript; charset=utf-8',
      body: 'console.log(1)',
      integrity: 'sha384-js',
    },
    'assets/main-DEF456.css': {
      contentType: 'text/css; charset=utf-8',
      body: 'p{}',
      integrity: 'sha384-css',
    },
  },
  scripts: ['assets/main-ABC123.js'],
  styles: ['assets/main-DEF456.css'],
};
const serveApp = makeServeApp(ASSETS);

/** A GET as API Gateway passes it; `stage` adds the stage prefix of an execute-api address. */
function get(
  path: string,
  options: { stage?: boolean; query?: Record<string, string[]> } = {},
): APIGatewayProxyEvent {
  const proxy = /^\/app\/(.+)$/.exec(path)?.[1];
  return {
    httpMethod: 'GET',
    path,
    pathParameters: proxy === undefined ? null : { proxy },
    multiValueQueryStringParameters: options.query ?? null,
    requestContext: {
      path: options.stage ? `/dev${path}` : path,
      stage: 'dev',
      domainName: options.stage ? 'abc123.execute-api.eu-west-1.amazonaws.com' : '127.0.0.1',
    },
  } as unknown as APIGatewayProxyEvent;
}

describe('serve-app', () => {
  it('answers every page with the shell under a CSP that allows no inline script and no framing', () => {
    for (const path of ['/app/', '/app/pipelines/p-1', '/app/settings/tokens']) {
      const result = serveApp(get(path));
      const csp = result.headers?.['content-security-policy'];

      expect(result.statusCode, path).toBe(200);
      expect(result.headers?.['content-type']).toBe('text/html; charset=utf-8');
      expect(result.headers?.['cache-control']).toBe('no-store');
      expect(csp).toContain("script-src 'self';");
      expect(csp).not.toContain('unsafe');
      expect(csp).toContain("frame-ancestors 'none'");
      expect(result.headers?.['referrer-policy']).toBe('no-referrer');
      expect(result.headers?.['x-content-type-options']).toBe('nosniff');
      expect(result.body).toContain(
        '<script type="module" src="assets/main-ABC123.js" integrity="sha384-js">',
      );
      expect(result.body).toContain(
        '<link rel="stylesheet" href="assets/main-DEF456.css" integrity="sha384-css">',
      );
    }
  });

  it('roots the shell at the stage on an execute-api address, and at /app/ on the local stack', () => {
    expect(serveApp(get('/app/', { stage: true })).body).toContain('<base href="/dev/app/">');
    expect(serveApp(get('/app/')).body).toContain('<base href="/app/">');
  });

  it('never writes an unsafe base path into the page', () => {
    const shell = appShell(ASSETS, '/x"><script>alert(1)</script>/app/');

    expect(shell).not.toContain('<script>alert(1)');
    expect(shell).toContain('<base href="/x&quot;>&lt;script>alert(1)&lt;/script>/app/">');
  });

  it('redirects /app to /app/ with its query, so relative addresses resolve under the application', () => {
    const result = serveApp(get('/app', { stage: true, query: { token: ['psm_1'] } }));

    expect(result.statusCode).toBe(301);
    expect(result.headers?.location).toBe('/dev/app/?token=psm_1');
  });

  it('serves a hashed asset for good, and answers 404 with {error, message} for one it does not have', () => {
    const script = serveApp(get('/app/assets/main-ABC123.js'));
    const missing = serveApp(get('/app/assets/main-OLD.js'));

    expect(script.statusCode).toBe(200);
    expect(script.body).toBe('console.log(1)');
    expect(script.headers?.['content-type']).toBe('text/javascript; charset=utf-8');
    expect(script.headers?.['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(script.headers?.['x-content-type-options']).toBe('nosniff');
    expect(missing.statusCode).toBe(404);
    expect(JSON.parse(missing.body)).toMatchObject({ error: 'NOT_FOUND' });
  });
});
