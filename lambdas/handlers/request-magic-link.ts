/*
 * Lambda handler of POST /auth/magic-link: emails a sign-in link, answering 202 whether or
 * not the address has an account.
 */
import { makeRequestMagicLink } from '../auth/magic-link.ts';
import { magicLinkRequestBodySchema } from '../auth/schemas.ts';
import { auditLog } from '../platform/auth-services.ts';
import { systemClock } from '../platform/clock.ts';
import { appUrlFromEnv, emailSenderFromEnv } from '../platform/email.ts';
import { httpHandler, json, parseBody } from '../platform/http.ts';
import { authRepositoryFromEnv } from '../platform/repositories.ts';

const requestMagicLink = makeRequestMagicLink({
  auth: authRepositoryFromEnv(),
  clock: systemClock,
  email: emailSenderFromEnv(systemClock),
  appUrl: appUrlFromEnv(),
  audit: auditLog,
});

/** POST /auth/magic-link {email}: always 202, whether or not the address has an account. */
export const handler = httpHandler(async (event) => {
  const { email } = parseBody(event, magicLinkRequestBodySchema);
  await requestMagicLink(email);
  return json(202, { message: 'If the address belongs to an account, a sign-in link is on its way.' });
});
