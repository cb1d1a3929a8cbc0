/*
 * Lambda handler of POST /auth/login: password login, answering the session as cookies or
 * in the body, with the CSRF check for cookie delivery.
 */
import { makeLogin } from '../auth/login.ts';
import { loginBodySchema } from '../auth/schemas.ts';
import type { Clock } from '../core/ports.ts';
import { auditLog, sessionServices } from '../platform/auth-services.ts';
import { systemClock } from '../platform/clock.ts';
import { httpHandler, parseBody } from '../platform/http.ts';
import { assertCsrfSafe, sessionResult } from '../platform/session-http.ts';

/** Builds the POST /auth/login handler; tests pass a clock to move through throttling windows. */
export function makeLogInHandler(clock: Clock = systemClock) {
  const services = sessionServices(clock);
  const login = makeLogin({
    auth: services.auth,
    clock,
    startSession: services.startSession,
    audit: auditLog,
  });
  return httpHandler(async (event) => {
    const body = parseBody(event, loginBodySchema);
    // Cookies set by a forged cross-site login would sign the victim into the attacker's account.
    if (body.delivery === 'cookie') assertCsrfSafe(event);
    const session = await login(body);
    return sessionResult(event, session, body.delivery, clock.now());
  });
}

/** POST /auth/login {email, password, teamId?, delivery?}: 200 and a session; 401 for any wrong pair; 429 when throttled. */
export const handler = makeLogInHandler();
