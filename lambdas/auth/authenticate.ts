/*
 * Turns the credential a request presents (API token or session access token) into the
 * caller, or a 401: what the Lambda authorizer runs, with a short cache for API tokens.
 */
import { UnauthorizedError } from '../core/errors.ts';
import type { Clock } from '../core/ports/common.ts';
import type { Principal } from '../core/principal.ts';
import { hashApiToken, isWellFormedApiToken } from './api-token.ts';
import type { AuditLog, AuthRepository } from './ports.ts';
import { hashSecret } from './secret-token.ts';
import { looksLikeSessionToken, verifySessionToken } from './session-token.ts';

/**
 * How long a warm authorizer trusts an API token it has already looked up. This, not API
 * Gateway's policy cache (which is off), bounds how long a revoked token keeps working: at most
 * this long after the revocation is written (the README promises 60 s). Sessions are never cached:
 * after a logout, a detected refresh-token reuse or a password change the very next request is 401.
 */
const CREDENTIAL_CACHE_MS = 30_000;
/** lastUsedAt is written when it is at least this old: one write a minute per busy token. */
const LAST_USED_RESOLUTION_MS = 60_000;
const CACHE_ENTRIES = 1_000;

/** A secret as the request carried it: the cookie may only hold a session token. */
export interface PresentedCredential {
  secret: string;
  via: 'bearer' | 'cookie';
}

export interface AuthenticateDeps {
  auth: AuthRepository;
  clock: Clock;
  /** The session signing key; only asked for when a session token is presented. */
  signingKey: () => Promise<Buffer>;
  audit: AuditLog;
  cacheMs?: number;
}

export type Authenticate = ((credential: PresentedCredential | undefined) => Promise<Principal>) & {
  /** Forgets every cached credential (tests, and nothing else, need this). */
  clearCache(): void;
};

const refused = (message = 'The credential is invalid, expired or revoked.') =>
  new UnauthorizedError(message);

interface LookUp {
  principal: Principal;
  /** Epoch ms after which the credential is invalid whatever the store says. */
  validUntil: number;
}

/** Turns the presented credential (API token or session) into the caller, or throws UnauthorizedError. */
export function makeAuthenticate({
  auth,
  clock,
  signingKey,
  audit,
  cacheMs = CREDENTIAL_CACHE_MS,
}: AuthenticateDeps) {
  const cache = new Map<string, { principal: Principal; until: number }>();

  async function lookUpApiToken(token: string, now: Date): Promise<LookUp> {
    const record = await auth.findApiTokenByHash(hashApiToken(token));
    if (!record || record.revokedAt) throw refused('The API token is invalid or revoked.');
    if (record.expiresAt && record.expiresAt <= now.toISOString())
      throw refused('The API token has expired.');
    // The role is read from the membership, so a demoted or removed user loses access with it.
    const membership = await auth.getMembership(record.userId, record.teamId);
    if (!membership) throw refused('The API token no longer belongs to a member of its team.');
    if (!record.lastUsedAt || now.getTime() - Date.parse(record.lastUsedAt) >= LAST_USED_RESOLUTION_MS) {
      try {
        await auth.touchApiToken(
          record.tokenHash,
          now.toISOString(),
          new Date(now.getTime() - LAST_USED_RESOLUTION_MS).toISOString(),
        );
      } catch (error) {
        // Bookkeeping must never refuse a valid token.
        audit.warn('could not record lastUsedAt', {
          tokenId: record.tokenId,
          errorClass: (error as Error).name,
        });
      }
    }
    return {
      principal: {
        principalId: record.userId,
        userId: record.userId,
        teamId: record.teamId,
        role: membership.role,
        method: 'api-token',
        tokenId: record.tokenId,
      },
      validUntil: record.expiresAt ? Date.parse(record.expiresAt) : Number.POSITIVE_INFINITY,
    };
  }

  async function lookUpSession(token: string, now: Date): Promise<Principal> {
    const claims = verifySessionToken(token, await signingKey(), now);
    if (!claims) throw refused('The session token is invalid or expired.');
    const session = await auth.getSession(claims.sid);
    if (!session || session.userId !== claims.uid || session.revokedAt)
      throw refused('The session has ended.');
    if (Date.parse(session.expiresAt) <= now.getTime()) throw refused('The session has expired.');
    const membership = await auth.getMembership(session.userId, session.teamId);
    if (!membership) throw refused('The session no longer belongs to a member of its team.');
    return {
      principalId: session.userId,
      userId: session.userId,
      teamId: session.teamId,
      role: membership.role,
      method: 'session',
      sessionId: session.sessionId,
    };
  }

  const authenticate = async (credential: PresentedCredential | undefined): Promise<Principal> => {
    if (!credential)
      throw refused('A credential is required: Authorization: Bearer <token> or the session cookie.');
    const { secret, via } = credential;
    const isSession = looksLikeSessionToken(secret);
    if (via === 'cookie' && !isSession) throw refused();
    if (!isSession && !isWellFormedApiToken(secret)) throw refused('The API token is invalid or revoked.');
    const now = clock.now();
    if (isSession) return lookUpSession(secret, now);
    const cacheKey = hashSecret(secret);
    const cached = cache.get(cacheKey);
    if (cached && cached.until > now.getTime()) return cached.principal;
    // Re-inserted at the end, so the bounded cache forgets the least recently looked-up token first.
    // Stryker disable next-line CallExpression: equivalent for callers; it only changes which entry a full cache forgets first, and every answer stays within the cache time either way.
    cache.delete(cacheKey);
    const { principal, validUntil } = await lookUpApiToken(secret, now);
    if (cache.size >= CACHE_ENTRIES) cache.delete(cache.keys().next().value as string);
    cache.set(cacheKey, { principal, until: Math.min(now.getTime() + cacheMs, validUntil) });
    return principal;
  };
  return Object.assign(authenticate, { clearCache: () => cache.clear() }) satisfies Authenticate;
}
