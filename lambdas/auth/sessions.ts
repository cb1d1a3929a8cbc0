/*
 * Session lifecycle: starting one after a login, refreshing it by refresh-token rotation
 * (with reuse detection that ends the whole family), and ending it on logout.
 */
import { ForbiddenError, UnauthorizedError } from '../core/errors.ts';
import type { Clock, IdGenerator } from '../core/ports/common.ts';
import type { Role } from '../core/principal.ts';
import type { AuditLog, AuthRepository, SessionMethod, User } from './ports.ts';
import { deriveSecret, generateSecret, hashSecret, isWellFormedSecret } from './secret-token.ts';
import { signSessionToken, verifySessionToken } from './session-token.ts';

/**
 * Lifetimes of a session's credentials. The access token is short so a stolen one is worth
 * little on its own; each refresh rotates the refresh token and extends its idle lifetime, never
 * past the session's absolute end.
 */
const SESSION_LIFETIMES = {
  accessTokenMs: 15 * 60_000,
  refreshTokenMs: 7 * 24 * 3600_000,
  sessionMs: 30 * 24 * 3600_000,
} as const;

export const REFRESH_TOKEN_PREFIX = 'psr_';
/**
 * For this long after a refresh token was rotated, presenting it again (two tabs refreshing at the
 * same moment) answers the same new pair instead of ending the session, as the "reuse interval"
 * of the big identity providers' rotation does. A reuse after it still ends the session family.
 */
export const REFRESH_REUSE_INTERVAL_MS = 10_000;

export interface SessionDeps {
  auth: AuthRepository;
  clock: Clock;
  ids: IdGenerator;
  /** The HMAC key that signs access tokens (Secrets Manager on AWS). */
  signingKey: () => Promise<Buffer>;
  audit: AuditLog;
}

/** What a login, a magic link or a refresh hands to the client: the secrets appear only here. */
export interface IssuedSession {
  sessionId: string;
  userId: string;
  teamId: string;
  role: Role;
  accessToken: string;
  accessTokenExpiresAt: string;
  refreshToken: string;
  refreshTokenExpiresAt: string;
  /** The session's absolute end. */
  expiresAt: string;
}

const invalidRefresh = () => new UnauthorizedError('The refresh token is invalid, used, expired or revoked.');

async function accessToken(
  deps: SessionDeps,
  sessionId: string,
  userId: string,
  now: Date,
  sessionEnd: number,
) {
  const expiresAt = Math.min(now.getTime() + SESSION_LIFETIMES.accessTokenMs, sessionEnd);
  const token = signSessionToken(
    { sid: sessionId, uid: userId, iat: Math.floor(now.getTime() / 1000), exp: Math.floor(expiresAt / 1000) },
    await deps.signingKey(),
  );
  return { token, expiresAt: new Date(Math.floor(expiresAt / 1000) * 1000).toISOString() };
}

/**
 * The team a new session acts for: the one asked for, which must be one of the user's (403
 * otherwise), or else the user's oldest membership. A user in no team cannot hold a session.
 */
async function chooseTeam(auth: AuthRepository, userId: string, wanted: string | undefined) {
  const teams = await auth.listTeamsOfUser(userId);
  if (wanted !== undefined) {
    const membership = teams.find((team) => team.teamId === wanted);
    if (!membership) throw new ForbiddenError('The user is not a member of that team.');
    return membership;
  }
  const [oldest] = [...teams].sort(
    (a, b) => a.createdAt.localeCompare(b.createdAt) || a.teamId.localeCompare(b.teamId),
  );
  if (!oldest) throw new ForbiddenError('The user belongs to no team yet.');
  return oldest;
}

/** Starts a session for a user whose identity was just proven (password or magic link). */
export function makeStartSession(deps: SessionDeps) {
  return async (user: User, method: SessionMethod, wantedTeamId?: string): Promise<IssuedSession> => {
    const membership = await chooseTeam(deps.auth, user.userId, wantedTeamId);
    const now = deps.clock.now();
    const sessionEnd = now.getTime() + SESSION_LIFETIMES.sessionMs;
    const sessionId = deps.ids.newId();
    const refreshToken = generateSecret(REFRESH_TOKEN_PREFIX);
    const refreshExpiresAt = new Date(Math.min(now.getTime() + SESSION_LIFETIMES.refreshTokenMs, sessionEnd));
    const expiresAt = new Date(sessionEnd).toISOString();
    await deps.auth.createSession(
      {
        sessionId,
        userId: user.userId,
        teamId: membership.teamId,
        method,
        createdAt: now.toISOString(),
        expiresAt,
      },
      {
        tokenHash: hashSecret(refreshToken),
        sessionId,
        createdAt: now.toISOString(),
        expiresAt: refreshExpiresAt.toISOString(),
      },
    );
    const access = await accessToken(deps, sessionId, user.userId, now, sessionEnd);
    deps.audit.info('session started', { userId: user.userId, sessionId, method, teamId: membership.teamId });
    return {
      sessionId,
      userId: user.userId,
      teamId: membership.teamId,
      role: membership.role,
      accessToken: access.token,
      accessTokenExpiresAt: access.expiresAt,
      refreshToken,
      refreshTokenExpiresAt: refreshExpiresAt.toISOString(),
      expiresAt,
    };
  };
}

/**
 * Exchanges a refresh token for a new access token and a new refresh token (rotation). A refresh
 * token that was already used means two parties hold the family: the whole session is revoked,
 * so both the thief and the user must log in again. `teamId` switches the session's team.
 */
export function makeRefreshSession(deps: SessionDeps) {
  return async (refreshToken: string, wantedTeamId?: string): Promise<IssuedSession> => {
    if (!isWellFormedSecret(REFRESH_TOKEN_PREFIX, refreshToken)) throw invalidRefresh();
    const usedHash = hashSecret(refreshToken);
    const record = await deps.auth.findRefreshToken(usedHash);
    if (!record) throw invalidRefresh();
    const session = await deps.auth.getSession(record.sessionId);
    const now = deps.clock.now();
    if (!session || session.revokedAt || Date.parse(session.expiresAt) <= now.getTime())
      throw invalidRefresh();
    const revokeFamily = async () => {
      await deps.auth.revokeSession(session.sessionId, now.toISOString(), 'refresh-token-reuse');
      deps.audit.warn('refresh token reused: session revoked', {
        sessionId: session.sessionId,
        userId: session.userId,
      });
      return invalidRefresh();
    };
    // The successor is derived from the used token, so a repeat within the reuse interval can be
    // answered with exactly the pair the rotation handed out.
    const nextToken = deriveSecret(REFRESH_TOKEN_PREFIX, await deps.signingKey(), refreshToken);
    const sessionEnd = Date.parse(session.expiresAt);
    /** The answer of the rotation that happened at `usedAt`, or the end of the family. */
    const repeatRotation = async (usedAt: string): Promise<IssuedSession> => {
      if (now.getTime() - Date.parse(usedAt) > REFRESH_REUSE_INTERVAL_MS) throw await revokeFamily();
      const [successor, current] = await Promise.all([
        deps.auth.findRefreshToken(hashSecret(nextToken)),
        deps.auth.getSession(session.sessionId),
      ]);
      if (!successor || successor.sessionId !== session.sessionId || !current || current.revokedAt)
        throw await revokeFamily();
      const membership = await deps.auth.getMembership(current.userId, current.teamId);
      if (!membership) throw new UnauthorizedError('The session no longer belongs to a member of its team.');
      const access = await accessToken(deps, current.sessionId, current.userId, new Date(usedAt), sessionEnd);
      deps.audit.info('refresh repeated within the reuse interval', { sessionId: current.sessionId });
      return {
        sessionId: current.sessionId,
        userId: current.userId,
        teamId: current.teamId,
        role: membership.role,
        accessToken: access.token,
        accessTokenExpiresAt: access.expiresAt,
        refreshToken: nextToken,
        refreshTokenExpiresAt: successor.expiresAt,
        expiresAt: current.expiresAt,
      };
    };
    if (record.usedAt) return repeatRotation(record.usedAt);
    if (Date.parse(record.expiresAt) <= now.getTime()) throw invalidRefresh();

    const teamId = wantedTeamId ?? session.teamId;
    const membership = await deps.auth.getMembership(session.userId, teamId);
    if (!membership) {
      if (wantedTeamId !== undefined) throw new ForbiddenError('The user is not a member of that team.');
      throw new UnauthorizedError('The session no longer belongs to a member of its team.');
    }

    const nextExpiresAt = new Date(Math.min(now.getTime() + SESSION_LIFETIMES.refreshTokenMs, sessionEnd));
    const outcome = await deps.auth.rotateRefreshToken({
      usedHash,
      usedAt: now.toISOString(),
      teamId,
      next: {
        tokenHash: hashSecret(nextToken),
        sessionId: session.sessionId,
        createdAt: now.toISOString(),
        expiresAt: nextExpiresAt.toISOString(),
      },
    });
    if (outcome === 'reused') {
      // Another request rotated it a moment ago (a second tab): answer what it got.
      const rotated = await deps.auth.findRefreshToken(usedHash);
      // Stryker disable next-line ConditionalExpression: equivalent; without a recorded use there is no successor either (one transaction writes both), so repeatRotation ends the family too.
      if (!rotated?.usedAt) throw await revokeFamily();
      return repeatRotation(rotated.usedAt);
    }
    if (outcome === 'session-ended') throw invalidRefresh();
    const access = await accessToken(deps, session.sessionId, session.userId, now, sessionEnd);
    return {
      sessionId: session.sessionId,
      userId: session.userId,
      teamId,
      role: membership.role,
      accessToken: access.token,
      accessTokenExpiresAt: access.expiresAt,
      refreshToken: nextToken,
      refreshTokenExpiresAt: nextExpiresAt.toISOString(),
      expiresAt: session.expiresAt,
    };
  };
}

/**
 * Ends the session an access token belongs to. An expired but authentic token still ends its
 * session; anything else is ignored, so logging out is idempotent and reveals nothing.
 */
export function makeEndSession(deps: Pick<SessionDeps, 'auth' | 'clock' | 'signingKey' | 'audit'>) {
  return async (accessToken: string | undefined): Promise<void> => {
    if (!accessToken) return;
    const now = deps.clock.now();
    const claims = verifySessionToken(accessToken, await deps.signingKey(), now, { allowExpired: true });
    if (!claims) return;
    await deps.auth.revokeSession(claims.sid, now.toISOString(), 'logout');
    deps.audit.info('session ended', { sessionId: claims.sid, userId: claims.uid });
  };
}
