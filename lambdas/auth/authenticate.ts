import { UnauthorizedError } from '../core/errors.ts';
import type { Clock } from '../core/ports.ts';
import type { Principal } from '../core/principal.ts';
import { hashApiToken, isWellFormedApiToken } from './api-token.ts';
import type { AuthRepository } from './ports.ts';

/**
 * How long a warm authorizer trusts a token it has already looked up. This, not API Gateway's
 * policy cache (which is off), bounds how long a revoked token keeps working.
 */
export const CREDENTIAL_CACHE_MS = 30_000;
const CACHE_ENTRIES = 1_000;

export interface AuthenticateDeps {
  auth: AuthRepository;
  clock: Clock;
  cacheMs?: number;
}

function bearerToken(authorization: string | undefined): string | undefined {
  const match = /^Bearer[ ]+(\S+)[ ]*$/i.exec(authorization ?? '');
  return match?.[1];
}

/** Turns an Authorization header into the caller, or throws UnauthorizedError. */
export function makeAuthenticate({ auth, clock, cacheMs = CREDENTIAL_CACHE_MS }: AuthenticateDeps) {
  const cache = new Map<string, { principal: Principal; until: number }>();

  async function lookUp(tokenHash: string, now: Date): Promise<{ principal: Principal; expiresAt: string | null }> {
    const token = await auth.findApiTokenByHash(tokenHash);
    if (!token || token.revokedAt) throw new UnauthorizedError('The API token is invalid or revoked.');
    if (token.expiresAt && token.expiresAt <= now.toISOString()) {
      throw new UnauthorizedError('The API token has expired.');
    }
    // The role is read from the membership, so a demoted or removed user loses access with it.
    const membership = await auth.getMembership(token.userId, token.teamId);
    if (!membership) throw new UnauthorizedError('The API token no longer belongs to a member of its team.');
    const principal: Principal = {
      principalId: token.userId,
      userId: token.userId,
      teamId: token.teamId,
      role: membership.role,
      method: 'api-token',
      tokenId: token.tokenId,
    };
    return { principal, expiresAt: token.expiresAt };
  }

  return async function authenticate(authorization: string | undefined): Promise<Principal> {
    const token = bearerToken(authorization);
    if (!token) throw new UnauthorizedError('An Authorization: Bearer <token> header is required.');
    if (!isWellFormedApiToken(token)) throw new UnauthorizedError('The API token is invalid or revoked.');
    const tokenHash = hashApiToken(token);
    const now = clock.now();
    const cached = cache.get(tokenHash);
    if (cached && cached.until > now.getTime()) return cached.principal;
    const { principal, expiresAt } = await lookUp(tokenHash, now);
    if (cache.size >= CACHE_ENTRIES) cache.delete(cache.keys().next().value as string);
    const expiry = expiresAt ? Date.parse(expiresAt) : Number.POSITIVE_INFINITY;
    cache.set(tokenHash, { principal, until: Math.min(now.getTime() + cacheMs, expiry) });
    return principal;
  };
}
