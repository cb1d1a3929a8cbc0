/* POST /auth/magic-link/verify {token, teamId?, delivery?}: a session for a valid, unused, unexpired link. */
import { makeAcceptInvitation } from '../auth/invitations.ts';
import { makeVerifyMagicLink } from '../auth/magic-link.ts';
import { magicLinkVerifyBodySchema } from '../auth/schemas.ts';
import { operationHandler } from '../http/operation.ts';
import { assertCsrfSafe, sessionReply } from '../http/session-http.ts';
import { sessionServices } from '../wiring/auth-services.ts';
import { memberRepositoryFromEnv } from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';
import { refreshSession } from './refresh-session.ts';
import { sessionAnswer } from './shapes.ts';

export const verifyMagicLink = defineOperation({
  name: 'verify-magic-link',
  method: 'POST',
  path: '/auth/magic-link/verify',
  summary: 'Exchange a magic-link token for a session.',
  access: { auth: 'readWrite', events: 'readWrite', sessionSecret: true },
  public:
    "It is how the holder of a magic-link token obtains a session. The token is single-use, valid for 15 minutes (an invitation's for 7 days, which also adds its holder to the team) and stored only as a hash; the handler applies the CSRF rule to browser requests.",
  body: {
    schema: magicLinkVerifyBodySchema,
    required: true,
    example: { token: 'psm_…', delivery: 'cookie' },
  },
  response: { status: 200, schema: sessionAnswer },
  errors: [401, 403],
});

export const handler = /* @__PURE__ */ operationHandler(verifyMagicLink, () => {
  const services = sessionServices();
  const verify = makeVerifyMagicLink({
    ...services,
    acceptInvitation: makeAcceptInvitation({
      auth: services.auth,
      members: memberRepositoryFromEnv(),
      clock: services.clock,
    }),
  });
  return async ({ body, event }) => {
    if (body.delivery === 'cookie') assertCsrfSafe(event);
    const session = await verify(body.token, body.teamId);
    return sessionReply(event, session, body.delivery, services.clock.now(), refreshSession.path);
  };
});
