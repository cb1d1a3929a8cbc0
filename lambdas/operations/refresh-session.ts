/*
 * POST /auth/refresh: rotates the refresh token (from the `ps_refresh` cookie, or `refreshToken`
 * in the body) and issues a new access token, delivered the way the refresh token came.
 */
import { refreshBodySchema } from '../auth/schemas.ts';
import { makeRefreshSession, REFRESH_TOKEN_PREFIX } from '../auth/sessions.ts';
import { UnauthorizedError } from '../core/errors.ts';
import type { Clock } from '../core/ports/common.ts';
import { operationHandler } from '../http/operation.ts';
import { REFRESH_COOKIE, requestCookie } from '../http/session-cookies.ts';
import { assertCsrfSafe, sessionReply } from '../http/session-http.ts';
import { sessionServices } from '../wiring/auth-services.ts';
import { systemClock } from '../wiring/clock.ts';
import { defineOperation } from './declaration.ts';
import { sessionAnswer } from './shapes.ts';

export const refreshSession = defineOperation({
  name: 'refresh-session',
  method: 'POST',
  path: '/auth/refresh',
  summary: 'Rotate the session.',
  access: { auth: 'readWrite', sessionSecret: true },
  public:
    'It exchanges a refresh token for a new session once the access token has expired, so it cannot require that access token. Refresh tokens rotate on every use and a reused one revokes the whole session.',
  body: { schema: refreshBodySchema, required: false, example: { refreshToken: 'psr_…' } },
  response: { status: 200, schema: sessionAnswer },
  errors: [401, 403],
});

/** The handler; tests pass a clock to move through session lifetimes. */
export function makeRefreshHandler(clock: Clock = systemClock) {
  return operationHandler(refreshSession, () => {
    const services = sessionServices(clock);
    const refresh = makeRefreshSession(services);
    return async ({ body, event }) => {
      const fromCookie = body.refreshToken === undefined;
      if (fromCookie) assertCsrfSafe(event);
      const refreshToken = body.refreshToken ?? requestCookie(event, REFRESH_COOKIE);
      if (!refreshToken?.startsWith(REFRESH_TOKEN_PREFIX))
        throw new UnauthorizedError('A refresh token is required.');
      const session = await refresh(refreshToken, body.teamId);
      return sessionReply(
        event,
        session,
        fromCookie ? 'cookie' : 'body',
        services.clock.now(),
        refreshSession.path,
      );
    };
  });
}

export const handler = /* @__PURE__ */ makeRefreshHandler();
