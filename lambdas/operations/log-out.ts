/*
 * POST /auth/logout: ends the session of the access token (Bearer or cookie) and deletes the
 * cookies. 204 also when there was nothing to end, so it can always be called.
 */
import { makeEndSession } from '../auth/sessions.ts';
import { operationHandler } from '../http/operation.ts';
import { basePathOf, clearedSessionCookies, presentedCredential } from '../http/session-cookies.ts';
import { assertCsrfSafe } from '../http/session-http.ts';
import { sessionServices } from '../wiring/auth-services.ts';
import { defineOperation } from './declaration.ts';
import { refreshSession } from './refresh-session.ts';

export const logOut = defineOperation({
  name: 'log-out',
  method: 'POST',
  path: '/auth/logout',
  summary: 'End the session and clear its cookies.',
  access: { auth: 'readWrite', sessionSecret: true },
  public:
    'Signing out must work with an expired access token; the handler ends only the session of the token it is given, always clears the session cookies, applies the CSRF rule to cookie requests and answers 204.',
  response: { status: 204 },
  // A cookie request that fails the CSRF rule (http/session-http.ts assertCsrfSafe).
  errors: [403],
});

export const handler = /* @__PURE__ */ operationHandler(logOut, () => {
  const endSession = makeEndSession(sessionServices());
  return async ({ event }) => {
    const credential = presentedCredential(event);
    if (credential?.via === 'cookie') assertCsrfSafe(event);
    await endSession(credential?.secret);
    return { cookies: clearedSessionCookies({ base: basePathOf(event), refresh: refreshSession.path }) };
  };
});
