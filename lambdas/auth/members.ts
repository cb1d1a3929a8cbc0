/*
 * A team's members: the list with names and roles, changing a role and removing someone. A team
 * always keeps an admin; a removed person's sessions for the team end and the API tokens they
 * created in it are revoked, so nothing of theirs keeps acting for the team.
 */
import { ConflictError, NotFoundError } from '../core/errors.ts';
import { actorOf, newEvent } from '../core/events.ts';
import type { Clock } from '../core/ports/common.ts';
import { assertSameTeam, type Principal, type Role } from '../core/principal.ts';
import { revokedEvent } from './api-tokens.ts';
import { assertAdminOf } from './invitations.ts';
import type { MemberRecord, MemberRepository } from './member-ports.ts';
import type { AuditLog, AuthRepository } from './ports.ts';

/** A member as the API shows them. */
export interface MemberView {
  userId: string;
  email: string;
  name: string;
  role: Role;
  joinedAt: string;
}

const toMemberView = (member: MemberRecord): MemberView => ({
  userId: member.userId,
  email: member.email,
  name: member.name,
  role: member.role,
  joinedAt: member.createdAt,
});

export interface MemberDeps {
  members: MemberRepository;
  auth: Pick<
    AuthRepository,
    | 'listActiveSessionIdsOfUser'
    | 'getSession'
    | 'revokeSession'
    | 'listLiveApiTokensOfUser'
    | 'revokeApiToken'
  >;
  clock: Clock;
  audit: AuditLog;
}

/** Every member of the caller's team, oldest first; any role may read it. */
export function makeListMembers({ members }: Pick<MemberDeps, 'members'>) {
  return async (principal: Principal, teamId: string) => {
    assertSameTeam(principal, teamId);
    const found = await members.listMembers(teamId);
    return { items: found.members.map(toMemberView), nextCursor: null };
  };
}

const lastAdmin = () =>
  new ConflictError('A team keeps at least one admin: make someone else an admin first.');

/** The member, or a 404 naming them; and whether they are the team's only admin. */
async function target(members: MemberRepository, teamId: string, userId: string) {
  const { members: all, version } = await members.listMembers(teamId);
  const member = all.find((candidate) => candidate.userId === userId);
  if (!member) throw new NotFoundError(`User ${userId} is not a member of this team.`);
  const admins = all.filter((candidate) => candidate.role === 'admin').length;
  return { member, version, onlyAdmin: member.role === 'admin' && admins <= 1 };
}

/** Gives a member another role (admins); the last admin cannot stop being one. */
export function makeSetMemberRole({ members, clock }: Pick<MemberDeps, 'members' | 'clock'>) {
  return async (principal: Principal, teamId: string, userId: string, role: Role): Promise<MemberView> => {
    assertAdminOf(principal, teamId);
    const { member, version, onlyAdmin } = await target(members, teamId, userId);
    if (member.role === role) return toMemberView(member);
    if (onlyAdmin) throw lastAdmin();
    const at = clock.now().toISOString();
    await members.setRole(
      teamId,
      userId,
      role,
      version,
      newEvent(
        'member.role_changed',
        { teamId, memberId: userId, role, actor: actorOf(principal) },
        { at, key: `${userId}_${version + 1}` },
      ),
    );
    return toMemberView({ ...member, role });
  };
}

/**
 * Removes a member (admins; anyone may remove themselves, leaving the team), never the last admin.
 * Then ends their sessions acting for the team and revokes the API tokens they created in it. A
 * retry after a fault finishes those revocations even though the membership is already gone.
 */
export function makeRemoveMember(deps: MemberDeps) {
  return async (principal: Principal, teamId: string, userId: string): Promise<void> => {
    if (principal.userId !== userId) assertAdminOf(principal, teamId);
    else assertSameTeam(principal, teamId);
    const at = deps.clock.now().toISOString();
    try {
      const { version, onlyAdmin } = await target(deps.members, teamId, userId);
      if (onlyAdmin) throw lastAdmin();
      await deps.members.removeMember(
        teamId,
        userId,
        version,
        newEvent(
          'member.removed',
          { teamId, memberId: userId, actor: actorOf(principal) },
          { at, key: `${userId}_${version + 1}` },
        ),
      );
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error;
      // Not a member (any more): what a removal left behind is finished, else this is a 404.
      if ((await endAccess(deps, principal, teamId, userId, at)) === 0) throw error;
      return;
    }
    await endAccess(deps, principal, teamId, userId, at);
  };
}

/** Ends the user's live sessions acting for the team and revokes their tokens of it; how many. */
async function endAccess(
  { auth, audit }: MemberDeps,
  principal: Principal,
  teamId: string,
  userId: string,
  at: string,
): Promise<number> {
  const [sessionIds, tokens] = await Promise.all([
    auth.listActiveSessionIdsOfUser(userId),
    auth.listLiveApiTokensOfUser(userId),
  ]);
  const sessions = (await Promise.all(sessionIds.map((id) => auth.getSession(id)))).filter(
    (session) => session !== null && session.teamId === teamId && !session.revokedAt,
  );
  const teamTokens = tokens.filter((token) => token.teamId === teamId);
  const actor = actorOf(principal);
  await Promise.all([
    ...sessions.map((session) => auth.revokeSession(session?.sessionId ?? '', at, 'member-removed')),
    ...teamTokens.map((token) => auth.revokeApiToken(token, at, revokedEvent(token, at, actor))),
  ]);
  audit.info('member access ended', {
    teamId,
    userId,
    sessions: sessions.length,
    apiTokens: teamTokens.length,
  });
  return sessions.length + teamTokens.length;
}
