// In-memory fakes of the auth ports (lambdas/auth/ports.ts) for the auth use-case unit tests:
// faithful to the DynamoDB adapters (lambdas/store/auth/) in its conditional writes and orderings.
import { randomBytes, scryptSync } from 'node:crypto';
import { expect } from 'vitest';
import type {
  ApiTokenRecord,
  AuditLog,
  AuthRepository,
  EmailMessage,
  EmailSender,
  MagicLinkRecord,
  Membership,
  RefreshTokenRecord,
  SessionRecord,
  Team,
  User,
} from '../../../lambdas/auth/ports.ts';
import { ApiError, ConflictError } from '../../../lambdas/core/errors.ts';
import type { Clock, IdGenerator } from '../../../lambdas/core/ports/common.ts';

/** What DynamoDB answers when a write's condition fails (the adapter lets some of these through). */
export class ConditionFailed extends Error {
  override name = 'ConditionalCheckFailedException';
}

const normalize = (email: string) => email.trim().toLowerCase();
const copy = <T>(value: T | undefined): T | null => (value === undefined ? null : structuredClone(value));

/**
 * The auth table in memory. Every read returns a copy (as a network read would); writes check the
 * same conditions the adapter's ConditionExpressions do. The maps are public so a test can arrange
 * a state (an expired session, a used refresh token) or look at what a use case wrote.
 */
export class FakeAuthRepository implements AuthRepository {
  readonly teams = new Map<string, Team>();
  readonly users = new Map<string, User>();
  readonly emails = new Map<string, string>();
  readonly memberships = new Map<string, Membership>();
  readonly apiTokens = new Map<string, ApiTokenRecord>();
  readonly apiTokenIds = new Map<string, string>();
  readonly sessions = new Map<string, SessionRecord>();
  readonly refreshTokens = new Map<string, RefreshTokenRecord>();
  readonly magicLinks = new Map<string, MagicLinkRecord>();
  readonly attempts = new Map<string, { attempts: number; windowStartedAt: string }>();

  async createTeam(team: Team) {
    if (this.teams.has(team.teamId)) throw new ConditionFailed();
    this.teams.set(team.teamId, { ...team });
  }

  async createUser(user: User) {
    const email = normalize(user.email);
    if (this.emails.has(email)) throw new ConflictError('A user with this email already exists.');
    if (this.users.has(user.userId)) throw new ConditionFailed();
    this.emails.set(email, user.userId);
    this.users.set(user.userId, { ...user, email });
  }

  async getUser(userId: string) {
    return copy(this.users.get(userId));
  }

  async findUserByEmail(email: string) {
    const userId = this.emails.get(normalize(email));
    return userId === undefined ? null : copy(this.users.get(userId));
  }

  async setPasswordHash(userId: string, passwordHash: string) {
    const user = this.users.get(userId);
    if (!user) throw new ConditionFailed();
    user.passwordHash = passwordHash;
    user.credentialsVersion = (user.credentialsVersion ?? 0) + 1;
  }

  async putMembership(membership: Membership) {
    this.memberships.set(`${membership.userId}#${membership.teamId}`, { ...membership });
  }

  async getMembership(userId: string, teamId: string) {
    return copy(this.memberships.get(`${userId}#${teamId}`));
  }

  /** In the table's order (by team id), not by age, as the adapter's query returns them. */
  async listTeamsOfUser(userId: string) {
    return [...this.memberships.values()]
      .filter((m) => m.userId === userId)
      .sort((a, b) => (a.teamId < b.teamId ? -1 : 1))
      .map((m) => ({ ...m, teamName: this.teams.get(m.teamId)?.name ?? m.teamId }));
  }

  async createApiToken(token: ApiTokenRecord) {
    if (this.apiTokens.has(token.tokenHash) || this.apiTokenIds.has(token.tokenId))
      throw new ConditionFailed();
    this.apiTokens.set(token.tokenHash, { ...token });
    this.apiTokenIds.set(token.tokenId, token.tokenHash);
  }

  async findApiTokenByHash(tokenHash: string) {
    return copy(this.apiTokens.get(tokenHash));
  }

  async getApiToken(tokenId: string) {
    const hash = this.apiTokenIds.get(tokenId);
    return hash === undefined ? null : copy(this.apiTokens.get(hash));
  }

  /** Newest first; like DynamoDB, the limit counts items before the team filter. */
  async listApiTokensOfUser(
    userId: string,
    teamId: string,
    page: { limit: number; cursor?: string | undefined },
  ) {
    const all = [...this.apiTokens.values()]
      .filter((t) => t.userId === userId)
      .sort((a, b) => (`${a.createdAt}#${a.tokenId}` < `${b.createdAt}#${b.tokenId}` ? 1 : -1));
    const start = page.cursor === undefined ? 0 : Number(page.cursor);
    const slice = all.slice(start, start + page.limit);
    const next = start + page.limit;
    return {
      items: slice.filter((t) => t.teamId === teamId).map((t) => structuredClone(t)),
      nextCursor: next < all.length ? String(next) : null,
    };
  }

  /** Every page of the user's index partition, in all teams, filtered to tokens not revoked. */
  async listLiveApiTokensOfUser(userId: string) {
    return [...this.apiTokens.values()]
      .filter((t) => t.userId === userId && t.revokedAt === null)
      .map((t) => structuredClone(t));
  }

  async revokeApiToken({ tokenHash }: Pick<ApiTokenRecord, 'tokenHash' | 'tokenId'>, at: string) {
    const token = this.apiTokens.get(tokenHash);
    if (token && token.revokedAt === null) token.revokedAt = at;
  }

  async touchApiToken(tokenHash: string, at: string, staleBefore: string) {
    const token = this.apiTokens.get(tokenHash);
    if (token && (token.lastUsedAt == null || token.lastUsedAt < staleBefore)) token.lastUsedAt = at;
  }

  async createSession(session: SessionRecord, refreshToken: RefreshTokenRecord) {
    if (this.sessions.has(session.sessionId) || this.refreshTokens.has(refreshToken.tokenHash))
      throw new ConditionFailed();
    this.sessions.set(session.sessionId, { ...session });
    this.refreshTokens.set(refreshToken.tokenHash, { ...refreshToken });
  }

  async getSession(sessionId: string) {
    return copy(this.sessions.get(sessionId));
  }

  async listActiveSessionIdsOfUser(userId: string) {
    return [...this.sessions.values()]
      .filter((s) => s.userId === userId && s.revokedAt === undefined)
      .sort((a, b) => (`${a.createdAt}#${a.sessionId}` < `${b.createdAt}#${b.sessionId}` ? 1 : -1))
      .map((s) => s.sessionId);
  }

  async revokeSession(sessionId: string, at: string, reason: NonNullable<SessionRecord['revokedReason']>) {
    const session = this.sessions.get(sessionId);
    if (session && session.revokedAt === undefined) {
      session.revokedAt = at;
      session.revokedReason = reason;
    }
  }

  async findRefreshToken(tokenHash: string) {
    return copy(this.refreshTokens.get(tokenHash));
  }

  /** One transaction: mark used, store the successor, move the live session to `teamId`. */
  async rotateRefreshToken(input: {
    usedHash: string;
    usedAt: string;
    next: RefreshTokenRecord;
    teamId: string;
  }) {
    const session = this.sessions.get(input.next.sessionId);
    if (!session) return 'session-ended' as const;
    const used = this.refreshTokens.get(input.usedHash);
    if (!used || used.usedAt !== undefined) return 'reused' as const;
    if (this.refreshTokens.has(input.next.tokenHash)) throw new ConditionFailed();
    if (session.revokedAt !== undefined) return 'session-ended' as const;
    used.usedAt = input.usedAt;
    this.refreshTokens.set(input.next.tokenHash, { ...input.next });
    session.teamId = input.teamId;
    session.lastRefreshedAt = input.usedAt;
    return 'rotated' as const;
  }

  async createMagicLink(link: MagicLinkRecord) {
    if (this.magicLinks.has(link.tokenHash)) throw new ConditionFailed();
    this.magicLinks.set(link.tokenHash, { ...link });
  }

  /** The delete is the one-time check: expiry is the caller's to compare, as with TTL. */
  async consumeMagicLink(tokenHash: string) {
    const link = this.magicLinks.get(tokenHash);
    this.magicLinks.delete(tokenHash);
    return copy(link);
  }

  async reserveAttempt(key: string, { limit, windowMs }: { limit: number; windowMs: number }, now: Date) {
    const floor = new Date(now.getTime() - windowMs).toISOString();
    const window = this.attempts.get(key);
    if (window && window.windowStartedAt > floor && window.attempts < limit) {
      window.attempts += 1;
      return { allowed: true } as const;
    }
    if (!window || window.windowStartedAt <= floor) {
      this.attempts.set(key, { attempts: 1, windowStartedAt: now.toISOString() });
      return { allowed: true } as const;
    }
    return { allowed: false, retryAt: new Date(Date.parse(window.windowStartedAt) + windowMs) } as const;
  }

  async clearAttempts(key: string) {
    this.attempts.delete(key);
  }
}

/** Where a FakeClock starts unless told otherwise. */
export const T0 = '2026-11-22T12:00:00.000Z';

/** The ISO time `ms` after `start`: how a test names the moments it moves the clock to. */
export const at = (ms: number, start: string = T0) => new Date(Date.parse(start) + ms).toISOString();

/** A clock that moves only when told to. */
export class FakeClock implements Clock {
  private current: number;
  constructor(start: Date | string = T0) {
    this.current = new Date(start).getTime();
  }
  now() {
    return new Date(this.current);
  }
  advance(ms: number) {
    this.current += ms;
  }
}

/** ids id-1, id-2, … in order of asking. */
export function sequentialIds(prefix = 'id'): IdGenerator {
  let next = 0;
  return { newId: () => `${prefix}-${++next}` };
}

export interface AuditEntry {
  level: 'info' | 'warn';
  message: string;
  attributes: Record<string, unknown>;
}

/** An audit log that keeps what it was told. */
export class RecordingAudit implements AuditLog {
  readonly entries: AuditEntry[] = [];
  info(message: string, attributes: Record<string, unknown>) {
    this.entries.push({ level: 'info', message, attributes });
  }
  warn(message: string, attributes: Record<string, unknown>) {
    this.entries.push({ level: 'warn', message, attributes });
  }
  messages() {
    return this.entries.map((entry) => `${entry.level}: ${entry.message}`);
  }
}

/** An outbox that keeps every email; `failWith` makes the next sends throw. */
export class RecordingEmailSender implements EmailSender {
  readonly sent: EmailMessage[] = [];
  failWith: Error | undefined;
  async send(message: EmailMessage) {
    if (this.failWith) throw this.failWith;
    this.sent.push(message);
  }
}

export const SIGNING_KEY = Buffer.from('a-unit-test-signing-key-of-at-least-32-chars');
export const signingKey = async () => SIGNING_KEY;

/** A team and a member of it, written straight into the fake (no use case involved). */
export async function seedMember(
  repo: FakeAuthRepository,
  {
    userId = 'user-ada',
    email = 'ada@example.test',
    teamId = 'team-a',
    role = 'admin',
    joinedAt = '2026-01-01T00:00:00.000Z',
    passwordHash,
  }: Partial<Membership & { email: string; joinedAt: string; passwordHash: string }> = {},
): Promise<User> {
  if (!repo.teams.has(teamId)) await repo.createTeam({ teamId, name: `Team ${teamId}`, createdAt: joinedAt });
  if (!repo.users.has(userId))
    await repo.createUser({
      userId,
      email,
      name: userId,
      createdAt: joinedAt,
      ...(passwordHash === undefined ? {} : { passwordHash }),
    });
  await repo.putMembership({ userId, teamId, role, createdAt: joinedAt });
  return (await repo.getUser(userId)) as User;
}

/**
 * A stored password hash in the production format with a small scrypt cost (N=2^10): what
 * verifyPassword accepts for a user created earlier, without 128 MiB and a third of a second a test.
 */
export function cheapPasswordHash(password: string): string {
  const salt = randomBytes(16);
  const key = scryptSync(password.normalize('NFKC'), salt, 32, { N: 1024, r: 8, p: 1 });
  return ['scrypt', 1024, 8, 1, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/** The API error a use case refused with (fails the test if it succeeded or threw anything else). */
export async function refusalOf(
  promise: Promise<unknown>,
): Promise<{ status: number; message: string; error: ApiError }> {
  const error = await promise.then(
    () => expect.unreachable('expected a refusal'),
    (e: unknown) => e,
  );
  if (!(error instanceof ApiError)) throw error;
  return { status: error.statusCode, message: error.message, error };
}
