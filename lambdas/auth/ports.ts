/*
 * The ports of the auth use cases: the records they read and write, the AuthRepository
 * that stores them (store/auth on DynamoDB), the email sender and the audit log.
 */
import type { DomainEvent } from '../core/events.ts';
import type { PageRequest } from '../core/ports/common.ts';
import type { Role } from '../core/principal.ts';
import type { Page } from '../core/schemas/common.ts';

export interface Team {
  teamId: string;
  name: string;
  createdAt: string;
}

/**
 * A team's API Gateway key on the evaluation plan (lib/api.ts): the authorizer names its value as
 * the request's usage identifier on the evaluation routes, so the plan counts evaluations per team.
 * Not a secret to the team (no request can present it: API Gateway takes it from the authorizer
 * only), but never shown in an answer.
 */
export interface TeamUsageKey {
  keyId: string;
  value: string;
}

/** A kept key, with the usage plan it was last put on (a replaced service stack has a new plan). */
export interface KeptUsageKey extends TeamUsageKey {
  planId: string | null;
}

/** Where a team's usage key is kept: on the team's item, one read away. */
export interface TeamUsageKeyStore {
  getTeamUsageKey(teamId: string): Promise<KeptUsageKey | null>;
  /**
   * Keeps `key` as the team's, on `planId`, unless the team has another key already, which it then
   * answers (the first one kept wins). A team that does not exist is a NotFoundError.
   */
  keepTeamUsageKey(teamId: string, key: TeamUsageKey, planId: string): Promise<TeamUsageKey>;
  /** A page of the teams whose key is missing or not yet on `planId` (the deploy's backfill). */
  listTeamsWithoutUsageKey(planId: string, cursor?: string): Promise<{ teamIds: string[]; cursor?: string }>;
}

/** The API Gateway side of usage keys: keys of the evaluation plan, each named after its team. */
export interface UsageKeyRegistry {
  /** The evaluation plan's id. */
  readonly planId: string;
  /** The team's key left by an earlier attempt that stopped before keeping it, if any. */
  findKey(teamId: string): Promise<TeamUsageKey | null>;
  /** A new enabled key named after the team. */
  createKey(teamId: string): Promise<TeamUsageKey>;
  /** Puts the key on the evaluation plan; a key already on it is left as it is. */
  addToPlan(keyId: string): Promise<void>;
}

export interface User {
  userId: string;
  email: string;
  name: string;
  createdAt: string;
  /** scrypt hash (auth/password.ts); absent for users who only use magic links. */
  passwordHash?: string;
  /**
   * Raised by every password change (absent: 0). A magic link carries the version it was sent
   * under and is refused once it differs, so a password change ends the links sent before it.
   */
  credentialsVersion?: number;
}

export interface Membership {
  userId: string;
  teamId: string;
  role: Role;
  createdAt: string;
}

/** An API token as stored: never the secret, only its SHA-256 and a hint. */
export interface ApiTokenRecord {
  tokenId: string;
  tokenHash: string;
  userId: string;
  teamId: string;
  name: string;
  hint: string;
  createdAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
  /** Written by the authorizer at most about once a minute per token. */
  lastUsedAt?: string | null;
}

export type SessionMethod = 'password' | 'magic-link';

/** One login on one browser or client: the family every rotated refresh token belongs to. */
export interface SessionRecord {
  sessionId: string;
  userId: string;
  /** The team the session acts for: a credential belongs to one team. */
  teamId: string;
  method: SessionMethod;
  createdAt: string;
  /** Absolute end of the session, whatever the refreshes. */
  expiresAt: string;
  lastRefreshedAt?: string;
  revokedAt?: string;
  revokedReason?: 'logout' | 'refresh-token-reuse' | 'password-changed' | 'member-removed';
}

/** A refresh token as stored: its SHA-256 only. A used one is kept to detect its reuse. */
export interface RefreshTokenRecord {
  tokenHash: string;
  sessionId: string;
  createdAt: string;
  expiresAt: string;
  usedAt?: string;
}

/** A magic-link token as stored: its SHA-256 only; consumed by a conditional delete. */
export interface MagicLinkRecord {
  tokenHash: string;
  userId: string;
  /** The user's credentialsVersion when the link was sent (links stored without it read 0). */
  credentialsVersion: number;
  createdAt: string;
  expiresAt: string;
  /** Set on an invitation's link: verifying it also accepts the invitation (auth/invitations.ts). */
  invitationId?: string;
}

export type RotationOutcome = 'rotated' | 'reused' | 'session-ended';

export type AttemptDecision = { allowed: true } | { allowed: false; retryAt: Date };

export interface AttemptLimit {
  limit: number;
  windowMs: number;
}

export interface AuthRepository {
  createTeam(team: Team): Promise<void>;
  /** Creates the user; an email already in use is a ConflictError. */
  createUser(user: User): Promise<void>;
  getUser(userId: string): Promise<User | null>;
  findUserByEmail(email: string): Promise<User | null>;
  /** Sets the password and raises the user's credentialsVersion by one, in one write. */
  setPasswordHash(userId: string, passwordHash: string): Promise<void>;
  putMembership(membership: Membership): Promise<void>;
  getMembership(userId: string, teamId: string): Promise<Membership | null>;
  /** The user's teams with their names. */
  listTeamsOfUser(userId: string): Promise<Array<Membership & { teamName: string }>>;

  /** Stores the token and writes `event` (api_token.created) in the same transaction. */
  createApiToken(token: ApiTokenRecord, event: DomainEvent): Promise<void>;
  findApiTokenByHash(tokenHash: string): Promise<ApiTokenRecord | null>;
  getApiToken(tokenId: string): Promise<ApiTokenRecord | null>;
  /** The user's tokens of one team, newest first. */
  listApiTokensOfUser(userId: string, teamId: string, page: PageRequest): Promise<Page<ApiTokenRecord>>;
  /** Every token of the user, in all teams, that is not revoked (expired ones included), all pages. */
  listLiveApiTokensOfUser(userId: string): Promise<ApiTokenRecord[]>;
  /** Sets revokedAt unless already set (revoking twice keeps the first time). */
  revokeApiToken(
    token: Pick<ApiTokenRecord, 'tokenHash' | 'tokenId'>,
    at: string,
    /** api_token.revoked, written only when this call revokes the token. */
    event: DomainEvent,
  ): Promise<void>;
  /** Sets lastUsedAt when it is absent or older than `staleBefore`; otherwise does nothing. */
  touchApiToken(tokenHash: string, at: string, staleBefore: string): Promise<void>;

  /** Stores a new session with its first refresh token, atomically. */
  createSession(session: SessionRecord, refreshToken: RefreshTokenRecord): Promise<void>;
  getSession(sessionId: string): Promise<SessionRecord | null>;
  /** Sessions of the user (newest first, at most 100) that are not revoked. */
  listActiveSessionIdsOfUser(userId: string): Promise<string[]>;
  /** Ends the session (and so its whole refresh-token family); ending it twice keeps the first. */
  revokeSession(
    sessionId: string,
    at: string,
    reason: NonNullable<SessionRecord['revokedReason']>,
  ): Promise<void>;
  findRefreshToken(tokenHash: string): Promise<RefreshTokenRecord | null>;
  /**
   * Marks `usedHash` used and stores `next`, in one transaction that also requires the session to
   * be live (and moves it to `teamId`). 'reused' when the token was already used, even by a
   * concurrent request; 'session-ended' when the session was revoked meanwhile.
   */
  rotateRefreshToken(input: {
    usedHash: string;
    usedAt: string;
    next: RefreshTokenRecord;
    teamId: string;
  }): Promise<RotationOutcome>;

  createMagicLink(link: MagicLinkRecord): Promise<void>;
  /** Deletes and returns the link, or null when it does not exist (never issued, or used). */
  consumeMagicLink(tokenHash: string): Promise<MagicLinkRecord | null>;

  /**
   * Counts one attempt under `key` in a fixed window that starts with the first attempt; refuses
   * once `limit` attempts were counted, until the window ends. Atomic under concurrency.
   */
  reserveAttempt(key: string, limit: AttemptLimit, now: Date): Promise<AttemptDecision>;
  clearAttempts(key: string): Promise<void>;
}

export interface EmailMessage {
  to: string;
  subject: string;
  text: string;
}

/** Sends an email: SES on AWS, a file in the outbox directory locally. */
export interface EmailSender {
  send(message: EmailMessage): Promise<void>;
}

/** Where the use cases report security-relevant events; never given a secret. */
export interface AuditLog {
  info(message: string, attributes: Record<string, unknown>): void;
  warn(message: string, attributes: Record<string, unknown>): void;
}
