/* GET /teams/{teamId}/invitations?limit&cursor: the team's invitations, newest first (admins). */
import { makeListInvitations } from '../auth/invitations.ts';
import { idSchema } from '../core/schemas/common.ts';
import { withSealedCursors } from '../http/cursors.ts';
import { operationHandler } from '../http/operation.ts';
import { systemClock } from '../wiring/clock.ts';
import { cursorSealFromEnv } from '../wiring/cursors.ts';
import { memberRepositoryFromEnv } from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';
import { pageQuery } from './page-query.ts';
import { pageOf } from './parameters.ts';
import { invitationAnswer } from './shapes.ts';

export const listTeamInvitations = defineOperation({
  name: 'list-team-invitations',
  method: 'GET',
  path: '/teams/{teamId}/invitations',
  summary: "The team's invitations, newest first, pending, accepted and revoked (admins).",
  access: { auth: 'read', sessionSecret: true },
  params: { teamId: idSchema },
  query: pageQuery,
  response: { status: 200, schema: pageOf(invitationAnswer) },
  errors: [404],
});

export const handler = /* @__PURE__ */ operationHandler(listTeamInvitations, () => {
  const list = makeListInvitations({ members: memberRepositoryFromEnv(), clock: systemClock });
  return withSealedCursors(
    listTeamInvitations,
    cursorSealFromEnv(),
    async ({ principal, params, query }) => ({
      body: await list(principal, params.teamId, query),
    }),
  );
});
