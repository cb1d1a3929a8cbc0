/*
 * GET /app and GET /app/{proxy+}: the review application's HTML shell and its content-hashed
 * assets, from files built into this function's bundle (web/build.ts), so the same code and the
 * same files serve on AWS and in the local stack.
 */
import { operationHandler } from '../http/operation.ts';
import { makeServeApp } from '../http/serve-app.ts';
import { defineOperation } from './declaration.ts';

const WEB_APP_BUILD = 'web/build.ts';

export const serveAppShell = defineOperation({
  name: 'serve-app',
  module: 'serve-app',
  method: 'GET',
  path: '/app',
  summary: 'The review application for browsers (HTML); /app redirects to /app/.',
  access: {},
  public:
    "The review application's HTML shell, opened by a browser before anyone signs in (its sign-in page is part of it). It holds no data: the application reads everything through the authorized API routes with the session cookie. Strict CSP, frame-ancestors 'none', no-store.",
  buildsFirst: [WEB_APP_BUILD],
  response: {
    status: 200,
    contentType: 'text/html',
    alsoAnswers: { 301: 'To /app/, where the application lives.' },
  },
  errors: [],
});

export const serveAppFiles = defineOperation({
  name: 'serve-app-files',
  module: 'serve-app',
  method: 'GET',
  path: '/app/{proxy+}',
  summary: "The review application's pages (the same HTML) and its content-hashed scripts and styles.",
  access: {},
  public:
    "The review application's deep links (the same HTML shell) and its content-hashed scripts and styles, which are the same for every visitor and hold no data. Everything the application shows it reads through the authorized API routes with the session cookie.",
  buildsFirst: [WEB_APP_BUILD],
  response: { status: 200, contentType: 'text/html' },
  errors: [404],
});

// One function serves both paths (API Gateway needs a resource for each).
export const handler = /* @__PURE__ */ operationHandler(
  serveAppFiles,
  async () => {
    const { APP_ASSETS } = await import('../../web/generated/app-assets.js');
    const serveApp = makeServeApp(APP_ASSETS);
    return async ({ event }) => ({ raw: serveApp(event) });
  },
  { alsoServes: [serveAppShell] },
);
