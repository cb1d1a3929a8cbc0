/*
 * Lambda handler of POST /auth/refresh: rotates the refresh token (cookie or body) and
 * issues a new access token, delivered the way the refresh token came.
 */
import { refreshBodySchema } from '../auth/schemas.ts';
import { makeRefreshSession, REFRESH_TOKEN_PREFIX } from '../auth/sessions.ts';
import { UnauthorizedError } from '../core/errors.ts';
import type { Clock } from '../core/ports.ts';
import { sessionServices } from '../platform/auth-services.ts';
import { systemClock } from '../platform/clock.ts';
import { httpHandler, parseBody } from '../platform/http.ts';
import { REFRESH_COOKIE, requestCookie } from '../platform/session-cookies.ts';
import { assertCsrfSafe, sessionResult } from '../platform/session-http.ts';

/**
 * POST /auth/refresh: rotates the refresh token (from the `ps_refresh` cookie, or `refreshToken`
 * in the body) and issues a new access token, delivered the way the refresh token came.
 */
export function makeRefreshHandler(clock: Clock = systemClock) {
  const services = sessionServices(clock);
  const refresh = makeRefreshSession(services);
  return httpHandler(async (event) => {
    const body = parseBody(event, refreshBodySchema, { optional: true });
    const fromCookie = body.refreshToken === undefined;
    if (fromCookie) assertCsrfSafe(event);
    const refreshToken = body.refreshToken ?? requestCookie(event, REFRESH_COOKIE);
    if (!refreshToken?.startsWith(REFRESH_TOKEN_PREFIX))
      throw new UnauthorizedError('A refresh token is required.');
    const session = await refresh(refreshToken, body.teamId);
    return sessionResult(event, session, fromCookie ? 'cookie' : 'body', services.clock.now());
  });
}

export const handler = makeRefreshHandler();
