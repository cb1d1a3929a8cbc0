/* POST /auth/magic-link {email}: always 202, whether or not the address has an account. */
import { makeRequestMagicLink } from '../auth/magic-link.ts';
import { magicLinkRequestBodySchema } from '../auth/schemas.ts';
import { operationHandler } from '../http/operation.ts';
import { auditLog } from '../wiring/auth-services.ts';
import { systemClock } from '../wiring/clock.ts';
import { appUrlFromEnv, emailSenderFromEnv } from '../wiring/email.ts';
import { magicLinkRequestStoresFromEnv } from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';
import { objectOf, stringSchema } from './parameters.ts';
import { showMagicLinkPage } from './show-magic-link-page.ts';

export const requestMagicLink = defineOperation({
  name: 'request-magic-link',
  method: 'POST',
  path: '/auth/magic-link',
  summary: 'Mail a one-time sign-in link; always 202.',
  access: { auth: 'readWrite', sendsEmail: true },
  public:
    'It is how a user without a password obtains a credential (a one-time sign-in link mailed to the address). It answers alike, no sooner than 400 ms, for known, unknown and throttled addresses, and mails at most 5 links per address per 15 minutes.',
  body: { schema: magicLinkRequestBodySchema, required: true, example: { email: 'ada@example.com' } },
  response: { status: 202, schema: objectOf({ message: stringSchema }) },
  errors: [429],
});

export const handler = /* @__PURE__ */ operationHandler(requestMagicLink, () => {
  const request = makeRequestMagicLink({
    auth: magicLinkRequestStoresFromEnv(),
    clock: systemClock,
    email: emailSenderFromEnv(systemClock),
    appUrl: appUrlFromEnv(),
    pagePath: showMagicLinkPage.path,
    audit: auditLog,
  });
  return async ({ body }) => {
    await request(body.email);
    return { body: { message: 'If the address belongs to an account, a sign-in link is on its way.' } };
  };
});
