/*
 * Lambda handler of POST /auth/logout: ends the session of the presented access token and
 * clears the session cookies.
 */
import { makeEndSession } from '../auth/sessions.ts';
import { sessionServices } from '../platform/auth-services.ts';
import { httpHandler, noContent, withCookies } from '../platform/http.ts';
import { basePathOf, clearedSessionCookies, presentedCredential } from '../platform/session-cookies.ts';
import { assertCsrfSafe } from '../platform/session-http.ts';

const endSession = makeEndSession(sessionServices());

/**
 * POST /auth/logout: ends the session of the access token (Bearer or cookie) and deletes the
 * cookies. 204 also when there was nothing to end, so it can always be called.
 */
export const handler = httpHandler(async (event) => {
  const credential = presentedCredential(event);
  if (credential?.via === 'cookie') assertCsrfSafe(event);
  await endSession(credential?.secret);
  return withCookies(noContent(), clearedSessionCookies(basePathOf(event)));
});
