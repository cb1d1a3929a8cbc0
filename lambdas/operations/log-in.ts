/* POST /auth/login: password login, answering the session as cookies or in the body. */
import { makeLogin } from '../auth/login.ts';
import { PASSWORD_HASHING_MEMORY_MB } from '../auth/password.ts';
import { loginBodySchema } from '../auth/schemas.ts';
import type { Clock } from '../core/ports/common.ts';
import { operationHandler } from '../http/operation.ts';
import { assertCsrfSafe, sessionReply } from '../http/session-http.ts';
import { auditLog, sessionServices } from '../wiring/auth-services.ts';
import { systemClock } from '../wiring/clock.ts';
import { defineOperation } from './declaration.ts';
import { refreshSession } from './refresh-session.ts';
import { sessionAnswer } from './shapes.ts';

export const logIn = defineOperation({
  name: 'log-in',
  method: 'POST',
  path: '/auth/login',
  summary: 'Sign in with email and password.',
  access: { auth: 'readWrite', sessionSecret: true },
  public:
    'It is how a caller obtains a credential (email and password in, session out). The handler throttles attempts per email (5 per 15 minutes), answers the same 401 after the same work for an unknown email and a wrong password, and applies the CSRF rule to browser requests.',
  memoryMb: PASSWORD_HASHING_MEMORY_MB,
  body: {
    schema: loginBodySchema,
    required: true,
    example: { email: 'ada@example.com', password: 'correct horse battery staple', delivery: 'body' },
  },
  response: { status: 200, schema: sessionAnswer },
  errors: [401, 403, 429],
});

/** The handler; tests pass a clock to move through throttling windows. */
export function makeLogInHandler(clock: Clock = systemClock) {
  return operationHandler(logIn, () => {
    const services = sessionServices(clock);
    const login = makeLogin({
      auth: services.auth,
      clock,
      startSession: services.startSession,
      audit: auditLog,
    });
    return async ({ body, event }) => {
      // Cookies set by a forged cross-site login would sign the victim into the attacker's account.
      if (body.delivery === 'cookie') assertCsrfSafe(event);
      return sessionReply(event, await login(body), body.delivery, clock.now(), refreshSession.path);
    };
  });
}

export const handler = /* @__PURE__ */ makeLogInHandler();
