/*
 * Lambda handler of GET /me: the caller's user, their teams with roles, and how the
 * request was authenticated.
 */
import { NotFoundError } from '../core/errors.ts';
import { httpHandler, json, principalOf } from '../platform/http.ts';
import { authRepositoryFromEnv } from '../platform/repositories.ts';

const auth = authRepositoryFromEnv();

/** GET /me: the user, their teams with roles, and how this request was authenticated. */
export const handler = httpHandler(async (event) => {
  const principal = principalOf(event);
  const [user, teams] = await Promise.all([
    auth.getUser(principal.userId),
    auth.listTeamsOfUser(principal.userId),
  ]);
  if (!user) throw new NotFoundError('The user of this credential no longer exists.');
  return json(200, {
    user: { id: user.userId, email: user.email, name: user.name, createdAt: user.createdAt },
    teams: teams.map((team) => ({ id: team.teamId, name: team.teamName, role: team.role })),
    authentication: {
      method: principal.method,
      teamId: principal.teamId,
      role: principal.role,
      ...(principal.tokenId ? { tokenId: principal.tokenId } : {}),
      ...(principal.sessionId ? { sessionId: principal.sessionId } : {}),
    },
  });
});
