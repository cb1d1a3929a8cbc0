/**
 * Serves the review application (web/) from assets embedded in the serve-app bundle: the HTML
 * shell for every page under /app/ (the application routes with the History API) and the
 * content-hashed scripts and styles under /app/assets/.
 */
import type { HttpEvent, HttpResult } from './response.ts';
import { json, STRICT_TRANSPORT_SECURITY } from './response.ts';
import { basePathOf } from './session-cookies.ts';

export interface AppAsset {
  contentType: string;
  body: string;
  /** Subresource integrity of the body, e.g. `sha384-…`. */
  integrity: string;
}

/** What web/build.ts generates: the files by their path under /app/, and which to load. */
export interface AppAssets {
  files: Record<string, AppAsset>;
  /** Paths of the module scripts the shell loads, e.g. `assets/main-3KX2VQ.js`. */
  scripts: string[];
  styles: string[];
}

/**
 * Scripts only from this origin (the hashed files; no inline script), styles likewise, data only
 * from this API, never framed, no form posts (forms are submitted by the script, never by the
 * browser, so a password can never end up in a URL).
 */
const APP_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'self'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  // The magic-link page carries a one-time token in its address: no page sends a Referer.
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  ...STRICT_TRANSPORT_SECURITY,
};

const ASSET_PREFIX = 'assets/';
/** A base path the shell may put in <base href>: path segments of URL-safe characters. */
const SAFE_BASE_PATH = /^(\/[A-Za-z0-9._~-]+)*$/;

function escapeAttribute(value: string): string {
  return value.replaceAll('&', '&amp;').replaceAll('"', '&quot;').replaceAll('<', '&lt;');
}

/** The HTML shell; `<base href>` makes the asset paths and the application's routes resolve under /app/. */
export function appShell(assets: AppAssets, appBase: string): string {
  const tag = (path: string, kind: 'script' | 'style') => {
    const integrity = assets.files[path]?.integrity ?? '';
    const attributes = `integrity="${escapeAttribute(integrity)}"`;
    return kind === 'script'
      ? `<script type="module" src="${escapeAttribute(path)}" ${attributes}></script>`
      : `<link rel="stylesheet" href="${escapeAttribute(path)}" ${attributes}>`;
  };
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<base href="${escapeAttribute(appBase)}">`,
    '<title>Pipeline Synthesis</title>',
    '<link rel="icon" href="data:,">',
    ...assets.styles.map((path) => tag(path, 'style')),
    ...assets.scripts.map((path) => tag(path, 'script')),
    '</head>',
    '<body><div id="app"><noscript>The review application needs JavaScript.</noscript></div></body>',
    '</html>',
    '',
  ].join('\n');
}

function queryString(event: HttpEvent): string {
  const params = new URLSearchParams();
  for (const [name, values] of Object.entries(event.multiValueQueryStringParameters ?? {})) {
    for (const value of values ?? []) params.append(name, value);
  }
  const query = params.toString();
  return query === '' ? '' : `?${query}`;
}

/** The serve-app operations: the shell, an asset, or a redirect from the bare /app to /app/. */
export function makeServeApp(assets: AppAssets): (event: HttpEvent) => HttpResult {
  return (event) => {
    const basePath = basePathOf(event);
    const appBase = `${SAFE_BASE_PATH.test(basePath) ? basePath : ''}/app/`;
    const rest = event.pathParameters?.proxy;
    if (rest === undefined && !event.path.endsWith('/')) {
      // Relative URLs (the assets, the application's links) resolve under /app/ only with the slash.
      return {
        statusCode: 301,
        headers: {
          location: `${appBase}${queryString(event)}`,
          'cache-control': 'no-store',
          ...SECURITY_HEADERS,
        },
        body: '',
      };
    }
    if (rest?.startsWith(ASSET_PREFIX)) {
      const asset = assets.files[rest];
      if (!asset) return json(404, { error: 'NOT_FOUND', message: `The application has no file ${rest}.` });
      return {
        statusCode: 200,
        headers: {
          'content-type': asset.contentType,
          // The name changes with the content, so a browser may keep a file for good.
          'cache-control': 'public, max-age=31536000, immutable',
          'cross-origin-resource-policy': 'same-origin',
          ...SECURITY_HEADERS,
        },
        body: asset.body,
      };
    }
    return {
      statusCode: 200,
      headers: {
        'content-type': 'text/html; charset=utf-8',
        // The shell names the current hashed files: always fetch it afresh.
        'cache-control': 'no-store',
        'content-security-policy': APP_CONTENT_SECURITY_POLICY,
        ...SECURITY_HEADERS,
      },
      body: appShell(assets, appBase),
    };
  };
}
