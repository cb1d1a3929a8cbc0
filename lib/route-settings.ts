import type { RouteDefinition } from '../lambdas/routes.ts';
import { WEB_BUILD_COMMAND } from './bundling.ts';

/**
 * What the route table (lambdas/routes.ts) does not say about a route's infrastructure: why a
 * public route may be public, and which functions need more memory.
 */

/** `POST /auth/login`: the key of a route in PUBLIC_ROUTE_REASONS. */
export function routeKey(route: Pick<RouteDefinition, 'method' | 'path'>): string {
  return `${route.method} ${route.path}`;
}

/**
 * Why each route with `authorized: false` goes without the authorizer: the reason of its cdk-nag
 * APIG4 (and COG4) acknowledgement. The stack refuses to synthesize a public route that has no
 * entry here, so no route becomes public without someone writing down why.
 */
export const PUBLIC_ROUTE_REASONS: Readonly<Record<string, string>> = {
  'GET /openapi.json':
    "Public by design: the API's OpenAPI description, generated from the route table and schemas, so that clients and tools can be built before anyone holds a credential. It holds no data and reads nothing but the code.",
  'POST /auth/login':
    'Public by design: it is how a caller obtains a credential (email and password in, session out). The handler throttles attempts per email (5 per 15 minutes), answers the same 401 after the same work for an unknown email and a wrong password, and applies the CSRF rule to browser requests.',
  'POST /auth/refresh':
    'Public by design: it exchanges a refresh token for a new session once the access token has expired, so it cannot require that access token. Refresh tokens rotate on every use and a reused one revokes the whole session.',
  'POST /auth/logout':
    'Public by design: signing out must work with an expired access token; the handler ends only the session of the token it is given, always clears the session cookies, applies the CSRF rule to cookie requests and answers 204.',
  'POST /auth/magic-link':
    'Public by design: it is how a user without a password obtains a credential (a one-time sign-in link mailed to the address). It answers alike, no sooner than 400 ms, for known, unknown and throttled addresses, and mails at most 5 links per address per 15 minutes.',
  'GET /auth/magic-link':
    'Public by design: the page a sign-in email links to, opened by a browser that holds no credential yet. It is static HTML with a hash-pinned script; it reads no data and does not consume the token, which it posts to POST /auth/magic-link/verify on a click.',
  'GET /app':
    "Public by design: the review application's HTML shell, opened by a browser before anyone signs in (its sign-in page is part of it). It holds no data: the application reads everything through the authorized API routes with the session cookie. Strict CSP, frame-ancestors 'none', no-store.",
  'GET /app/{proxy+}':
    "Public by design: the review application's deep links (the same HTML shell) and its content-hashed scripts and styles, which are the same for every visitor and hold no data. Everything the application shows it reads through the authorized API routes with the session cookie.",
  'POST /auth/magic-link/verify':
    'Public by design: it is how the holder of a magic-link token obtains a session. The token is single-use, valid for 15 minutes and stored only as a hash; the handler applies the CSRF rule to browser requests.',
};

/**
 * Route entries whose handlers hash or verify passwords with scrypt (N=2^17, r=8: 128 MiB per
 * hash, see lambdas/auth/password.ts). The route table has no field for memory, so they are named
 * here. Lambda allots CPU in proportion to memory: at the 256 MB default one hash leaves little
 * headroom and takes seconds on a fraction of a vCPU; 1024 MB brings it well under a second.
 */
export const PASSWORD_HASHING_ENTRIES: ReadonlySet<string> = new Set(['log-in', 'change-password']);
export const PASSWORD_HASHING_MEMORY_MB = 1024;

/**
 * Shell commands to run right before a route function is bundled. The assets function embeds the
 * review application: web/build.ts builds web/src with esbuild into web/generated/app-assets.js,
 * which the handler imports, so `cdk synth` ships what web/ holds now, with no manual step.
 */
export const BEFORE_BUNDLING: Readonly<Record<string, readonly string[]>> = {
  'serve-app': [WEB_BUILD_COMMAND],
};
