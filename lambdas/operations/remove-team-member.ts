/* DELETE /teams/{teamId}/members/{userId}: 204; ends the person's sessions and API tokens for the team. */
import { makeRemoveMember } from '../auth/members.ts';
import { idSchema } from '../core/schemas/common.ts';
import { operationHandler } from '../http/operation.ts';
import { auditLog } from '../wiring/auth-services.ts';
import { systemClock } from '../wiring/clock.ts';
import { authRepositoryFromEnv, memberRepositoryFromEnv } from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';

export const removeTeamMember = defineOperation({
  name: 'remove-team-member',
  method: 'DELETE',
  path: '/teams/{teamId}/members/{userId}',
  summary:
    'Remove a member (admins; anyone may remove themselves). Never the last admin (409). Their sessions acting for the team end at once and the API tokens they created in it are revoked (refused within 60 s).',
  access: { auth: 'readWrite', events: 'readWrite' },
  params: { teamId: idSchema, userId: idSchema },
  response: { status: 204 },
  errors: [404, 409],
});

export const handler = /* @__PURE__ */ operationHandler(removeTeamMember, () => {
  const remove = makeRemoveMember({
    members: memberRepositoryFromEnv(),
    auth: authRepositoryFromEnv(),
    clock: systemClock,
    audit: auditLog,
  });
  return async ({ principal, params }) => {
    await remove(principal, params.teamId, params.userId);
    return {};
  };
});
