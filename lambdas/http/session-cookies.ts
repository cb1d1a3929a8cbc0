/*
 * The session cookies (`ps_session`, `ps_refresh`): which credential a request presents
 * (Bearer or cookie), and the Set-Cookie headers that issue and clear them.
 */
import type { PresentedCredential } from '../auth/authenticate.ts';
import type { IssuedSession } from '../auth/sessions.ts';
import { UnauthorizedError } from '../core/errors.ts';
import { cookieHeaderOf, parseCookieHeader, serializeCookie } from './cookies.ts';
import { findHeader } from './headers.ts';

/**
 * The session cookies. Both are HttpOnly (scripts never see them), Secure, SameSite=Strict (this
 * is an API called by a same-site app with fetch: no top-level navigation needs the cookie, so
 * Strict costs nothing and keeps it off every cross-site request), host-only (no Domain), and
 * scoped to the API's base path:
 * - `ps_session`: the access token, Path=<base>/ so every route receives it. It lives as long as
 *   the refresh token although the token inside expires after 15 minutes: logout must still be
 *   able to name the session, and the authorizer refuses the expired token anyway.
 * - `ps_refresh`: the refresh token, Path=<base> + the refresh operation's path, so it is sent to nothing else.
 * No `__Host-` prefix (it forbids a Path other than /) and no `__Secure-` prefix (browsers handle
 * it unevenly on http://localhost, where the local stack runs).
 */
export const SESSION_COOKIE = 'ps_session';
export const REFRESH_COOKIE = 'ps_refresh';

export interface RequestShape {
  path: string;
  headers?: Record<string, string | undefined> | null;
  multiValueHeaders?: Record<string, string[] | undefined> | null;
  requestContext?: { path?: string; stage?: string; domainName?: string } | null;
}

const EXECUTE_API_DOMAIN = /\.execute-api\.[a-z0-9-]+\.amazonaws\.com(\.cn)?$/;

/**
 * The path prefix under which the browser sees this API: `/<stage>` on the execute-api endpoint,
 * a base-path mapping on a custom domain, nothing on the local gateway (whose URLs carry no
 * stage, although its requestContext.path does, as on AWS).
 */
export function basePathOf(request: RequestShape): string {
  const fullPath = request.requestContext?.path ?? request.path;
  const prefix = fullPath.endsWith(request.path)
    ? fullPath.slice(0, fullPath.length - request.path.length)
    : '';
  const domain = request.requestContext?.domainName ?? '';
  if (!EXECUTE_API_DOMAIN.test(domain) && prefix === `/${request.requestContext?.stage ?? ''}`) return '';
  return prefix.replace(/\/+$/, '');
}

const BASE_OPTIONS = { httpOnly: true, secure: true, sameSite: 'Strict' } as const;

function secondsUntil(iso: string, now: Date): number {
  return Math.max(1, Math.floor((Date.parse(iso) - now.getTime()) / 1000));
}

/**
 * Where the cookies apply: `base` is the API's base path as the client reaches it (the stage on
 * the execute-api endpoint), `refresh` the refresh operation's path, the only one the refresh
 * cookie is sent to.
 */
export interface CookiePaths {
  base: string;
  refresh: string;
}

/** Set-Cookie values that hand a session to a browser. */
export function sessionCookies(session: IssuedSession, paths: CookiePaths, now: Date): string[] {
  const refreshMaxAge = secondsUntil(session.refreshTokenExpiresAt, now);
  return [
    serializeCookie(SESSION_COOKIE, session.accessToken, {
      ...BASE_OPTIONS,
      path: `${paths.base}/`,
      maxAgeSeconds: refreshMaxAge,
    }),
    serializeCookie(REFRESH_COOKIE, session.refreshToken, {
      ...BASE_OPTIONS,
      path: `${paths.base}${paths.refresh}`,
      maxAgeSeconds: refreshMaxAge,
    }),
  ];
}

/** Set-Cookie values that delete both session cookies (same names and paths, Max-Age=0). */
export function clearedSessionCookies(paths: CookiePaths): string[] {
  return [
    serializeCookie(SESSION_COOKIE, '', { ...BASE_OPTIONS, path: `${paths.base}/`, maxAgeSeconds: 0 }),
    serializeCookie(REFRESH_COOKIE, '', {
      ...BASE_OPTIONS,
      path: `${paths.base}${paths.refresh}`,
      maxAgeSeconds: 0,
    }),
  ];
}

/** One cookie of the request. */
export function requestCookie(request: RequestShape, name: string): string | undefined {
  const value = parseCookieHeader(cookieHeaderOf(request.headers, request.multiValueHeaders)).get(name);
  return value === '' ? undefined : value;
}

/** A header of the request, case-insensitively. */
export function headerOf(request: RequestShape, name: string): string | undefined {
  // An empty header counts as absent here: an empty Authorization falls back to the cookie.
  return findHeader(request.headers, name) || undefined;
}

const BEARER = /^Bearer[ ]+(\S+)[ ]*$/i;

/** The token of an `Authorization: Bearer <token>` value (any case, any spaces), else undefined. */
export function bearerSecret(authorization: string): string | undefined {
  return BEARER.exec(authorization)?.[1];
}

/**
 * How many Authorization headers the request carries. API Gateway keeps only the last of them in
 * `headers` and all of them in `multiValueHeaders`, while a rate limit in front may count the first.
 */
function authorizationHeaderCount(request: RequestShape): number {
  let count = 0;
  for (const [name, values] of Object.entries(request.multiValueHeaders ?? {})) {
    if (name.toLowerCase() === 'authorization') count += values?.length ?? 0;
  }
  if (count > 0) return count;
  for (const name of Object.keys(request.headers ?? {}))
    if (name.toLowerCase() === 'authorization') count += 1;
  return count;
}

/**
 * The credential a request presents: an `Authorization: Bearer` header wins (API token or session
 * access token); otherwise the session cookie. A present but malformed Authorization header is
 * not silently replaced by the cookie. Several Authorization headers are refused (401): which one
 * counts would depend on who reads them.
 */
export function presentedCredential(request: RequestShape): PresentedCredential | undefined {
  if (authorizationHeaderCount(request) > 1)
    throw new UnauthorizedError('Send one Authorization header; this request has several.');
  const authorization = headerOf(request, 'authorization');
  if (authorization !== undefined) {
    const secret = bearerSecret(authorization);
    return secret ? { secret, via: 'bearer' } : undefined;
  }
  const cookie = requestCookie(request, SESSION_COOKIE);
  return cookie ? { secret: cookie, via: 'cookie' } : undefined;
}
