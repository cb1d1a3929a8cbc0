/*
 * Invitations into a team: an admin invites an address with a role; the email carries a sign-in
 * link (a magic link naming the invitation) that, verified, adds the person to the team, creating
 * the account when there is none. The answer never says whether the address had an account.
 */
import {
  ConflictError,
  ForbiddenError,
  NotFoundError,
  RateLimitedError,
  ServiceUnavailableError,
  UnauthorizedError,
} from '../core/errors.ts';
import { actorOf, newEvent } from '../core/events.ts';
import type { Clock, IdGenerator, PageRequest } from '../core/ports/common.ts';
import { assertSameTeam, type Principal, type Role } from '../core/principal.ts';
import type { Page } from '../core/schemas/common.ts';
import { normalizeEmail } from './email-address.ts';
import { MAGIC_LINK_PREFIX, magicLinkUrl } from './magic-link.ts';
import type { InvitationRecord, MemberRepository } from './member-ports.ts';
import type { AttemptLimit, AuditLog, AuthRepository, EmailSender, MagicLinkRecord, User } from './ports.ts';
import { generateSecret, hashSecret } from './secret-token.ts';

/** An invitation's link works this long (7 days, as GitHub's organization invitations). */
export const INVITATION_LIFETIME_MS = 7 * 24 * 3600_000;
/** Invitations a team may send an hour: enough to onboard a team, too few to spam with. */
export const TEAM_INVITATIONS: AttemptLimit = { limit: 50, windowMs: 3600_000 };

/** An invitation as the API shows it: never the link's token. */
export interface InvitationView {
  id: string;
  teamId: string;
  email: string;
  role: Role;
  status: InvitationRecord['status'];
  invitedBy: string;
  createdAt: string;
  expiresAt: string;
  acceptedAt: string | null;
  revokedAt: string | null;
}

export function toInvitationView(
  invitation: InvitationRecord,
  now: Date,
): InvitationView & { expired: boolean } {
  return {
    id: invitation.invitationId,
    teamId: invitation.teamId,
    email: invitation.email,
    role: invitation.role,
    status: invitation.status,
    invitedBy: invitation.invitedBy,
    createdAt: invitation.createdAt,
    expiresAt: invitation.expiresAt,
    acceptedAt: invitation.acceptedAt ?? null,
    revokedAt: invitation.revokedAt ?? null,
    expired: invitation.status === 'pending' && Date.parse(invitation.expiresAt) <= now.getTime(),
  };
}

/** Team changes are for the team's admins. */
export function assertAdminOf(principal: Principal, teamId: string): void {
  assertSameTeam(principal, teamId);
  if (principal.role !== 'admin') {
    throw new ForbiddenError(`Only an admin of the team can do this; you are a ${principal.role}.`);
  }
}

export interface InviteDeps {
  auth: Pick<
    AuthRepository,
    'findUserByEmail' | 'createMagicLink' | 'reserveAttempt' | 'getUser' | 'listTeamsOfUser'
  >;
  members: MemberRepository;
  clock: Clock;
  ids: IdGenerator;
  email: () => EmailSender;
  appUrl: () => string;
  pagePath: string;
  audit: AuditLog;
}

/** Stores the invitation and its link, then emails the link; a failed email revokes the invitation. */
export function makeInviteMember(deps: InviteDeps) {
  return async (principal: Principal, teamId: string, input: { email: string; role: Role }) => {
    assertAdminOf(principal, teamId);
    const email = normalizeEmail(input.email);
    const now = deps.clock.now();
    const { members } = await deps.members.listMembers(teamId);
    if (members.some((member) => normalizeEmail(member.email) === email)) {
      throw new ConflictError(`${email} is already a member of this team; change their role instead.`);
    }
    const decision = await deps.auth.reserveAttempt(`INVITE#${teamId}`, TEAM_INVITATIONS, now);
    if (!decision.allowed) {
      const seconds = Math.max(1, Math.ceil((decision.retryAt.getTime() - now.getTime()) / 1000));
      throw new RateLimitedError(
        `A team sends at most ${TEAM_INVITATIONS.limit} invitations an hour.`,
        seconds,
      );
    }
    const invitation: InvitationRecord = {
      invitationId: deps.ids.newId(),
      teamId,
      email,
      role: input.role,
      invitedBy: principal.userId,
      createdAt: now.toISOString(),
      expiresAt: new Date(now.getTime() + INVITATION_LIFETIME_MS).toISOString(),
      status: 'pending',
    };
    const event = (type: 'member.invited' | 'invitation.revoked', at: string) =>
      newEvent(
        type,
        { teamId, invitationId: invitation.invitationId, role: invitation.role, actor: actorOf(principal) },
        { at, key: invitation.invitationId },
      );
    await deps.members.createInvitation(invitation, event('member.invited', invitation.createdAt));
    const token = generateSecret(MAGIC_LINK_PREFIX);
    await deps.auth.createMagicLink(await invitationLink(deps, invitation, token));
    const [inviter, teams] = await Promise.all([
      deps.auth.getUser(principal.userId),
      deps.auth.listTeamsOfUser(principal.userId),
    ]);
    const from = {
      inviter: inviter?.email ?? 'an admin',
      teamName: teams.find((team) => team.teamId === teamId)?.teamName ?? 'a team',
    };
    try {
      await deps.email().send(invitationEmail(deps, invitation, token, from));
    } catch (error) {
      deps.audit.warn('invitation email failed', {
        invitationId: invitation.invitationId,
        errorClass: (error as Error).name,
      });
      const at = deps.clock.now().toISOString();
      await deps.members.revokeInvitation(
        invitation.invitationId,
        at,
        principal.userId,
        event('invitation.revoked', at),
      );
      throw new ServiceUnavailableError(
        'The invitation email could not be sent, so the invitation was withdrawn; try again.',
      );
    }
    deps.audit.info('invitation sent', { invitationId: invitation.invitationId, teamId });
    return toInvitationView(invitation, now);
  };
}

/**
 * The link's record: for an address with an account, that user (under their credentials version,
 * as any magic link); otherwise a user id reserved for the account the link will create.
 */
async function invitationLink(
  deps: InviteDeps,
  invitation: InvitationRecord,
  token: string,
): Promise<MagicLinkRecord> {
  const user = await deps.auth.findUserByEmail(invitation.email);
  return {
    tokenHash: hashSecret(token),
    userId: user?.userId ?? deps.ids.newId(),
    credentialsVersion: user?.credentialsVersion ?? 0,
    createdAt: invitation.createdAt,
    expiresAt: invitation.expiresAt,
    invitationId: invitation.invitationId,
  };
}

function invitationEmail(
  deps: InviteDeps,
  invitation: InvitationRecord,
  token: string,
  from: { inviter: string; teamName: string },
) {
  const days = INVITATION_LIFETIME_MS / (24 * 3600_000);
  return {
    to: invitation.email,
    subject: 'You are invited to a team on Pipeline Synthesis',
    text: [
      `${from.inviter} invites you to the team "${from.teamName}" on Pipeline Synthesis, as ${invitation.role}.`,
      '',
      `Accept and sign in: ${magicLinkUrl(deps.appUrl(), deps.pagePath, token)}`,
      '',
      `The link works once, within ${days} days (until ${invitation.expiresAt}). If you did not expect it, ignore this email.`,
      '',
    ].join('\n'),
  };
}

/** The team's invitations, newest first (admins). */
export function makeListInvitations({ members, clock }: Pick<InviteDeps, 'members' | 'clock'>) {
  return async (principal: Principal, teamId: string, page: PageRequest): Promise<Page<InvitationView>> => {
    assertAdminOf(principal, teamId);
    const found = await members.listInvitations(teamId, page);
    const now = clock.now();
    return { items: found.items.map((item) => toInvitationView(item, now)), nextCursor: found.nextCursor };
  };
}

/** Withdraws a pending invitation: its link stops working at once. Another team's is a 404. */
export function makeRevokeInvitation({ members, clock }: Pick<InviteDeps, 'members' | 'clock'>) {
  return async (principal: Principal, teamId: string, invitationId: string): Promise<void> => {
    assertAdminOf(principal, teamId);
    const invitation = await members.getInvitation(invitationId);
    if (!invitation || invitation.teamId !== teamId) {
      throw new NotFoundError(`Invitation ${invitationId} does not exist.`);
    }
    const at = clock.now().toISOString();
    await members.revokeInvitation(
      invitationId,
      at,
      principal.userId,
      newEvent(
        'invitation.revoked',
        { teamId, invitationId, role: invitation.role, actor: actorOf(principal) },
        { at, key: invitationId },
      ),
    );
  };
}

export interface AcceptInvitationDeps {
  auth: Pick<AuthRepository, 'findUserByEmail' | 'getUser' | 'createUser'>;
  members: Pick<MemberRepository, 'getInvitation' | 'acceptInvitation'>;
  clock: Clock;
}

const invalidInvitation = () =>
  new UnauthorizedError('The sign-in link is invalid, already used or expired.');

/**
 * Accepts the invitation a verified link names: finds or creates the account, adds it to the team
 * (a member already keeps their role) and answers the user and the team the session acts for.
 * A revoked, accepted or expired invitation is refused like a used link.
 */
export function makeAcceptInvitation({ auth, members, clock }: AcceptInvitationDeps) {
  return async (
    link: MagicLinkRecord & { invitationId: string },
  ): Promise<{ user: User; teamId: string }> => {
    const invitation = await members.getInvitation(link.invitationId);
    const now = clock.now();
    if (invitation?.status !== 'pending' || Date.parse(invitation.expiresAt) <= now.getTime()) {
      throw invalidInvitation();
    }
    const user = await accountFor(auth, invitation.email, link, now.toISOString());
    const at = now.toISOString();
    const accepted = await members.acceptInvitation(
      invitation.invitationId,
      { userId: user.userId, teamId: invitation.teamId, role: invitation.role, createdAt: at },
      at,
      newEvent(
        'member.joined',
        {
          teamId: invitation.teamId,
          invitationId: invitation.invitationId,
          memberId: user.userId,
          role: invitation.role,
          actor: { userId: user.userId, credential: 'session' },
        },
        { at, key: invitation.invitationId },
      ),
    );
    if (!accepted) throw invalidInvitation();
    return { user, teamId: invitation.teamId };
  };
}

/** The invited address's account; created (magic-link only, no password) when there is none. */
async function accountFor(
  auth: AcceptInvitationDeps['auth'],
  email: string,
  link: MagicLinkRecord,
  at: string,
): Promise<User> {
  const existing = await auth.findUserByEmail(email);
  if (existing) {
    // A link sent to an account before its password changed is void, as any magic link.
    if (existing.userId === link.userId && (existing.credentialsVersion ?? 0) !== link.credentialsVersion) {
      throw invalidInvitation();
    }
    return existing;
  }
  const created: User = { userId: link.userId, email, name: email.split('@')[0] ?? email, createdAt: at };
  try {
    await auth.createUser(created);
    return created;
  } catch (error) {
    // The account was created meanwhile (another invitation accepted at the same moment).
    if (!(error instanceof ConflictError)) throw error;
    const raced = await auth.findUserByEmail(email);
    if (!raced) throw error;
    return raced;
  }
}
