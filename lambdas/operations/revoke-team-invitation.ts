/* DELETE /teams/{teamId}/invitations/{invitationId}: 204; the invitation's link stops working at once (admins). */
import { makeRevokeInvitation } from '../auth/invitations.ts';
import { idSchema } from '../core/schemas/common.ts';
import { operationHandler } from '../http/operation.ts';
import { systemClock } from '../wiring/clock.ts';
import { memberRepositoryFromEnv } from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';

export const revokeTeamInvitation = defineOperation({
  name: 'revoke-team-invitation',
  method: 'DELETE',
  path: '/teams/{teamId}/invitations/{invitationId}',
  summary: 'Withdraw a pending invitation (admins); its link no longer signs anyone in.',
  access: { auth: 'readWrite', events: 'readWrite' },
  params: { teamId: idSchema, invitationId: idSchema },
  response: { status: 204 },
  // 409: already accepted or revoked.
  errors: [404, 409],
});

export const handler = /* @__PURE__ */ operationHandler(revokeTeamInvitation, () => {
  const revoke = makeRevokeInvitation({ members: memberRepositoryFromEnv(), clock: systemClock });
  return async ({ principal, params }) => {
    await revoke(principal, params.teamId, params.invitationId);
    return {};
  };
});
