/* POST /teams/{teamId}/invitations {email, role}: 201; the address gets a one-time sign-in link (admins). */
import { makeInviteMember } from '../auth/invitations.ts';
import { inviteMemberBodySchema } from '../auth/member-schemas.ts';
import { idSchema } from '../core/schemas/common.ts';
import { operationHandler } from '../http/operation.ts';
import { auditLog } from '../wiring/auth-services.ts';
import { nanoidGenerator, systemClock } from '../wiring/clock.ts';
import { appUrlFromEnv, emailSenderFromEnv } from '../wiring/email.ts';
import { authRepositoryFromEnv, memberRepositoryFromEnv } from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';
import { invitationAnswer } from './shapes.ts';
import { showMagicLinkPage } from './show-magic-link-page.ts';

export const inviteTeamMember = defineOperation({
  name: 'invite-team-member',
  method: 'POST',
  path: '/teams/{teamId}/invitations',
  summary:
    'Invite an email address with a role (admins). The address gets a sign-in link, valid once for 7 days, that adds the person to the team and creates their account if they have none; the answer is the same either way.',
  access: { auth: 'readWrite', events: 'readWrite', sendsEmail: true },
  params: { teamId: idSchema },
  body: {
    schema: inviteMemberBodySchema,
    required: true,
    example: { email: 'grace@example.com', role: 'member' },
  },
  response: { status: 201, schema: invitationAnswer },
  // 409: already a member; 429: more than 50 invitations this hour; 503: the email could not be sent.
  errors: [404, 409, 429, 503],
});

export const handler = /* @__PURE__ */ operationHandler(inviteTeamMember, () => {
  const invite = makeInviteMember({
    auth: authRepositoryFromEnv(),
    members: memberRepositoryFromEnv(),
    clock: systemClock,
    ids: nanoidGenerator,
    email: emailSenderFromEnv(systemClock),
    appUrl: appUrlFromEnv(),
    pagePath: showMagicLinkPage.path,
    audit: auditLog,
  });
  return async ({ principal, params, body }) => ({ body: await invite(principal, params.teamId, body) });
});
