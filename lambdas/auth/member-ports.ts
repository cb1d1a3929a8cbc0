/*
 * The ports of a team's people: its members with their names and roles, and the invitations that
 * bring new ones in (store/auth/members.ts on DynamoDB). Every change of the team's membership is
 * conditioned on the team's membership version, so two admins never demote each other to none.
 */
import type { DomainEvent } from '../core/events.ts';
import type { PageRequest } from '../core/ports/common.ts';
import type { Role } from '../core/principal.ts';
import type { Page } from '../core/schemas/common.ts';
import type { Membership } from './ports.ts';

/** A member as the team sees them: the membership with the user's email and name. */
export interface MemberRecord extends Membership {
  email: string;
  name: string;
}

export type InvitationStatus = 'pending' | 'accepted' | 'revoked';

/** An invitation as stored; its link is a magic link carrying `invitationId`. */
export interface InvitationRecord {
  invitationId: string;
  teamId: string;
  /** Normalized (lower-case) address. */
  email: string;
  role: Role;
  invitedBy: string;
  createdAt: string;
  expiresAt: string;
  status: InvitationStatus;
  acceptedAt?: string;
  acceptedBy?: string;
  revokedAt?: string;
  revokedBy?: string;
}

/** The members of a team as read together with the version their next change must name. */
export interface TeamMembers {
  members: MemberRecord[];
  /** The team's membership version (0 before any change was versioned). */
  version: number;
}

export interface MemberRepository {
  /**
   * Every member of the team (at most MAX_TEAM_MEMBERS), roles read strongly consistent, with the
   * team's membership version.
   */
  listMembers(teamId: string): Promise<TeamMembers>;
  /**
   * Gives the member `role` if the team's membership version is still `version` (then raises it);
   * a concurrent change or a missing member is a ConflictError / NotFoundError. Writes `event`.
   */
  setRole(teamId: string, userId: string, role: Role, version: number, event: DomainEvent): Promise<void>;
  /** Deletes the membership under the same version condition, writing `event`. */
  removeMember(teamId: string, userId: string, version: number, event: DomainEvent): Promise<void>;

  createInvitation(invitation: InvitationRecord, event: DomainEvent): Promise<void>;
  getInvitation(invitationId: string): Promise<InvitationRecord | null>;
  /** The team's invitations, newest first. */
  listInvitations(teamId: string, page: PageRequest): Promise<Page<InvitationRecord>>;
  /** pending → revoked; an invitation no longer pending is a ConflictError. */
  revokeInvitation(invitationId: string, at: string, by: string, event: DomainEvent): Promise<void>;
  /**
   * pending (and unexpired at `at`) → accepted by `membership.userId`, and the membership created
   * unless the user is already a member (then kept as it is), in one transaction with `event`.
   * False when the invitation is no longer pending or has expired: nothing is written.
   */
  acceptInvitation(
    invitationId: string,
    membership: Membership,
    at: string,
    event: DomainEvent,
  ): Promise<boolean>;
}
