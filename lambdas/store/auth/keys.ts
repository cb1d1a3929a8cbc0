/*
 * Every key of the auth table, built in one place (as store/keys.ts builds the other tables'):
 * the auth stores, the local stack and the tests read and write its items only through these.
 */
import type { IndexKey, ItemKey } from '../keys.ts';

/*
 * Auth table. No secret is stored: tokens by their SHA-256 only, passwords as scrypt.
 *   team          pk TEAM#<teamId>            sk TEAM
 *   user          pk USER#<userId>            sk USER
 *   email         pk EMAIL#<lower-case>       sk EMAIL        (uniqueness and login lookup)
 *   membership    pk USER#<userId>            sk TEAM#<teamId> gsi1 TEAM#<teamId>#MEMBERS / <userId>
 *   api token     pk APITOKEN#<sha256>        sk APITOKEN     gsi1 USER#<userId>#APITOKENS / <createdAt>#<tokenId>
 *   api token id  pk APITOKENID#<tokenId>     sk APITOKENID   → tokenHash (for revoking by id)
 *   token count   pk USER#<userId> | TEAM#<teamId>  sk APITOKENS  liveApiTokens (the limits of auth/api-tokens.ts)
 *   session       pk SESSION#<sessionId>      sk SESSION      gsi1 USER#<userId>#SESSIONS / <createdAt>#<sessionId>
 *   refresh token pk REFRESH#<sha256>         sk REFRESH      (kept after use until the session ends: reuse detection)
 *   magic link    pk MAGICLINK#<sha256>       sk MAGICLINK
 *   attempts      pk ATTEMPTS#<key>           sk ATTEMPTS     (login, password-change and magic-link throttling)
 *   invitation    pk INVITATION#<id>          sk INVITATION   gsi1 TEAM#<teamId>#INVITATIONS / <createdAt>#<id>
 * The team item also carries membersVersion, raised by every role change and removal.
 */

export const teamKey = (teamId: string): ItemKey => ({ pk: `TEAM#${teamId}`, sk: 'TEAM' });

/** The user's partition: the user and their memberships. */
export const userPartition = (userId: string) => `USER#${userId}`;

export const userKey = (userId: string): ItemKey => ({ pk: userPartition(userId), sk: 'USER' });

/** Expects the normalized (lower-case) address. */
export const emailKey = (normalizedEmail: string): ItemKey => ({
  pk: `EMAIL#${normalizedEmail}`,
  sk: 'EMAIL',
});

/** A user's memberships share the user's partition; their sort keys start so. */
export const MEMBERSHIP_PREFIX = 'TEAM#';

export const membershipKey = (userId: string, teamId: string): ItemKey => ({
  pk: userPartition(userId),
  sk: `${MEMBERSHIP_PREFIX}${teamId}`,
});

export const membershipIndexKey = (membership: { userId: string; teamId: string }): IndexKey => ({
  gsi1pk: teamMembersPartition(membership.teamId),
  gsi1sk: membership.userId,
});

/** Every API token item's pk starts so: the authorizer's write grant is limited to these items. */
export const API_TOKEN_PARTITION_PREFIX = 'APITOKEN#';

export const apiTokenKey = (tokenHash: string): ItemKey => ({
  pk: `${API_TOKEN_PARTITION_PREFIX}${tokenHash}`,
  sk: 'APITOKEN',
});

export const apiTokenIdKey = (tokenId: string): ItemKey => ({
  pk: `APITOKENID#${tokenId}`,
  sk: 'APITOKENID',
});

/** The count of a person's (`USER#…`) or a team's (`TEAM#…`) API tokens not revoked. */
export const apiTokenCountKey = (owner: { userId: string } | { teamId: string }): ItemKey => ({
  pk: 'userId' in owner ? userPartition(owner.userId) : `TEAM#${owner.teamId}`,
  sk: 'APITOKENS',
});

/** The gsi1 partition that lists a user's API tokens, newest first. */
export const userApiTokensPartition = (userId: string) => `${userPartition(userId)}#APITOKENS`;

export const apiTokenIndexKey = (token: {
  userId: string;
  createdAt: string;
  tokenId: string;
}): IndexKey => ({
  gsi1pk: userApiTokensPartition(token.userId),
  gsi1sk: `${token.createdAt}#${token.tokenId}`,
});

export const sessionKey = (sessionId: string): ItemKey => ({ pk: `SESSION#${sessionId}`, sk: 'SESSION' });

/** The gsi1 partition that lists a user's sessions. */
export const userSessionsPartition = (userId: string) => `${userPartition(userId)}#SESSIONS`;

export const sessionIndexKey = (session: {
  userId: string;
  createdAt: string;
  sessionId: string;
}): IndexKey => ({
  gsi1pk: userSessionsPartition(session.userId),
  gsi1sk: `${session.createdAt}#${session.sessionId}`,
});

export const refreshTokenKey = (tokenHash: string): ItemKey => ({
  pk: `REFRESH#${tokenHash}`,
  sk: 'REFRESH',
});

export const magicLinkKey = (tokenHash: string): ItemKey => ({
  pk: `MAGICLINK#${tokenHash}`,
  sk: 'MAGICLINK',
});

export const attemptsKey = (key: string): ItemKey => ({ pk: `ATTEMPTS#${key}`, sk: 'ATTEMPTS' });

/** The gsi1 partition of a team's memberships. */
export const teamMembersPartition = (teamId: string) => `TEAM#${teamId}#MEMBERS`;

export const invitationKey = (invitationId: string): ItemKey => ({
  pk: `INVITATION#${invitationId}`,
  sk: 'INVITATION',
});

/** The gsi1 partition that lists a team's invitations, newest first. */
export const teamInvitationsPartition = (teamId: string) => `TEAM#${teamId}#INVITATIONS`;

export const invitationIndexKey = (invitation: {
  teamId: string;
  createdAt: string;
  invitationId: string;
}): IndexKey => ({
  gsi1pk: teamInvitationsPartition(invitation.teamId),
  gsi1sk: `${invitation.createdAt}#${invitation.invitationId}`,
});
