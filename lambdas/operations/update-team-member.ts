/* PATCH /teams/{teamId}/members/{userId} {role}: change a member's role (admins; never the last admin). */
import { setMemberRoleBodySchema } from '../auth/member-schemas.ts';
import { makeSetMemberRole } from '../auth/members.ts';
import { idSchema } from '../core/schemas/common.ts';
import { operationHandler } from '../http/operation.ts';
import { systemClock } from '../wiring/clock.ts';
import { memberRepositoryFromEnv } from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';
import { memberAnswer } from './shapes.ts';

export const updateTeamMember = defineOperation({
  name: 'update-team-member',
  method: 'PATCH',
  path: '/teams/{teamId}/members/{userId}',
  summary:
    "Change a member's role (admins). The team's last admin stays an admin (409); the new role applies to the member's next request.",
  access: { auth: 'readWrite', events: 'readWrite' },
  params: { teamId: idSchema, userId: idSchema },
  body: { schema: setMemberRoleBodySchema, required: true, example: { role: 'viewer' } },
  response: { status: 200, schema: memberAnswer },
  errors: [404, 409],
});

export const handler = /* @__PURE__ */ operationHandler(updateTeamMember, () => {
  const setRole = makeSetMemberRole({ members: memberRepositoryFromEnv(), clock: systemClock });
  return async ({ principal, params, body }) => ({
    body: await setRole(principal, params.teamId, params.userId, body.role),
  });
});
