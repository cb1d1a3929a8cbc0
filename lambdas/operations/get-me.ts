/* GET /me: the user, their teams with roles, and how this request was authenticated. */
import { NotFoundError } from '../core/errors.ts';
import { operationHandler } from '../http/operation.ts';
import { authRepositoryFromEnv } from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';
import { meAnswer } from './shapes.ts';

export const getMe = defineOperation({
  name: 'get-me',
  method: 'GET',
  path: '/me',
  summary: 'The current user, their teams and how this request was authenticated.',
  access: { auth: 'read' },
  response: { status: 200, schema: meAnswer },
  errors: [],
});

export const handler = /* @__PURE__ */ operationHandler(getMe, () => {
  const auth = authRepositoryFromEnv();
  return async ({ principal }) => {
    const [user, teams] = await Promise.all([
      auth.getUser(principal.userId),
      auth.listTeamsOfUser(principal.userId),
    ]);
    if (!user) throw new NotFoundError('The user of this credential no longer exists.');
    return {
      body: {
        user: { id: user.userId, email: user.email, name: user.name, createdAt: user.createdAt },
        teams: teams.map((team) => ({ id: team.teamId, name: team.teamName, role: team.role })),
        authentication: {
          method: principal.method,
          teamId: principal.teamId,
          role: principal.role,
          ...(principal.tokenId ? { tokenId: principal.tokenId } : {}),
          ...(principal.sessionId ? { sessionId: principal.sessionId } : {}),
        },
      },
    };
  };
});
