/*
 * The API token format (`psa_` secrets with a checksum): generating one, recognising a
 * well-formed one, the hash it is stored under and the hint a listing shows.
 */
import { generateSecret, hashSecret, isWellFormedSecret, SECRET_BODY_LENGTH } from './secret-token.ts';

/**
 * API tokens look like `psa_<30 random base62><6 base62 CRC32 checksum>` (secret-token.ts): the
 * prefix lets secret scanners find a leaked token, the checksum lets the authorizer refuse a
 * mistyped or made-up token without touching the database. Only the SHA-256 is ever stored, and
 * a lookup by that hash is the comparison: no secret is compared byte by byte in application code.
 */
const API_TOKEN_PREFIX = 'psa_';
export const API_TOKEN_LENGTH = API_TOKEN_PREFIX.length + SECRET_BODY_LENGTH;

/**
 * API tokens not revoked (expired ones count until revoked) one person may hold, across their
 * teams, and one team may have: each token has its own per-credential rate bucket, so the number of
 * tokens bounds what one person or team can send (docs/api.md, "Abuse and cost limits").
 */
export const API_TOKEN_LIMITS = { perPerson: 100, perTeam: 500 } as const;

/** A new token secret; show it once, store only hashApiToken(secret). */
export function generateApiToken(): string {
  return generateSecret(API_TOKEN_PREFIX);
}

/** True when the string has the token's shape and a matching checksum. */
export function isWellFormedApiToken(candidate: string): boolean {
  return isWellFormedSecret(API_TOKEN_PREFIX, candidate);
}

export function hashApiToken(token: string): string {
  return hashSecret(token);
}

/** What a listing may show of a token: enough to recognise it, never enough to use it. */
export function tokenHint(token: string): string {
  return `${API_TOKEN_PREFIX}…${token.slice(-4)}`;
}
