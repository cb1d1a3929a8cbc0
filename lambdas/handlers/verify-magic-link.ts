/*
 * Lambda handler of POST /auth/magic-link/verify: exchanges a sign-in link's token for a
 * session, as cookies or in the body.
 */
import { makeVerifyMagicLink } from '../auth/magic-link.ts';
import { magicLinkVerifyBodySchema } from '../auth/schemas.ts';
import { sessionServices } from '../platform/auth-services.ts';
import { httpHandler, parseBody } from '../platform/http.ts';
import { assertCsrfSafe, sessionResult } from '../platform/session-http.ts';

const services = sessionServices();
const verify = makeVerifyMagicLink(services);

/** POST /auth/magic-link/verify {token, teamId?, delivery?}: a session for a valid, unused, unexpired link; 401 otherwise. */
export const handler = httpHandler(async (event) => {
  const body = parseBody(event, magicLinkVerifyBodySchema);
  if (body.delivery === 'cookie') assertCsrfSafe(event);
  const session = await verify(body.token, body.teamId);
  return sessionResult(event, session, body.delivery, services.clock.now());
});
