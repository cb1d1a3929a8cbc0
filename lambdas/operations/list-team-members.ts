/* GET /teams/{teamId}/members: the team's members with their names and roles (any role reads it). */
import { makeListMembers } from '../auth/members.ts';
import { idSchema } from '../core/schemas/common.ts';
import { operationHandler } from '../http/operation.ts';
import { memberRepositoryFromEnv } from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';
import { pageOf } from './parameters.ts';
import { memberAnswer } from './shapes.ts';

export const listTeamMembers = defineOperation({
  name: 'list-team-members',
  method: 'GET',
  path: '/teams/{teamId}/members',
  summary: "The team's members (at most 1,000), oldest first: email, name, role and when they joined.",
  access: { auth: 'read' },
  params: { teamId: idSchema },
  response: { status: 200, schema: pageOf(memberAnswer) },
  // 404: a teamId that is not an id (another team's is a 403).
  errors: [404],
});

export const handler = /* @__PURE__ */ operationHandler(listTeamMembers, () => {
  const list = makeListMembers({ members: memberRepositoryFromEnv() });
  return async ({ principal, params }) => ({ body: await list(principal, params.teamId) });
});
