/*
 * HTTP side of the session endpoints: the CSRF check for cookie requests and the answer
 * to a login, magic-link verification or refresh (cookies or body).
 */
import { csrfRefusal } from '../auth/csrf.ts';
import type { IssuedSession } from '../auth/sessions.ts';
import { ForbiddenError } from '../core/errors.ts';
import { basePathOf, headerOf, type RequestShape, sessionCookies } from './session-cookies.ts';

/** Refuses (403) a cookie-carried or cookie-setting request that fails the CSRF rule (auth/csrf.ts). */
export function assertCsrfSafe(request: RequestShape & { httpMethod: string }): void {
  const refusal = csrfRefusal(request.httpMethod, (name) => headerOf(request, name));
  if (refusal) throw new ForbiddenError(refusal);
}

/**
 * The answer to a login, a magic-link verification or a refresh. With `cookie` delivery the
 * secrets travel only in HttpOnly cookies, never in a body a script could read; with `body`
 * delivery (scripts, apps that send `Authorization: Bearer`) they are in the body and no cookie
 * is set.
 */
export function sessionReply(
  request: RequestShape,
  session: IssuedSession,
  delivery: 'cookie' | 'body',
  now: Date,
  refreshPath: string,
): { body: Record<string, unknown>; cookies?: string[] } {
  const summary = {
    session: {
      id: session.sessionId,
      userId: session.userId,
      teamId: session.teamId,
      role: session.role,
      expiresAt: session.expiresAt,
      accessTokenExpiresAt: session.accessTokenExpiresAt,
      refreshTokenExpiresAt: session.refreshTokenExpiresAt,
    },
  };
  if (delivery === 'body') {
    return { body: { ...summary, accessToken: session.accessToken, refreshToken: session.refreshToken } };
  }
  return {
    body: summary,
    cookies: sessionCookies(session, { base: basePathOf(request), refresh: refreshPath }, now),
  };
}
