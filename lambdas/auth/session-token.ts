/*
 * Session access tokens: `pss_` claims signed with HMAC-SHA256, which the authorizer checks
 * without a store read before it looks the session up.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import * as z from 'zod/mini';

/**
 * Session access tokens: `pss_<base64url JSON claims>.<base64url HMAC-SHA256>`, signed with the
 * session signing key (Secrets Manager on AWS). The signature lets the authorizer refuse a forged
 * token without a database read; the session id inside is then checked against the store on every
 * cache miss, so logging out or revoking the family bites long before `exp`. The claims hold no
 * team and no role: the session record and the membership are the source of truth for both.
 */
const SESSION_TOKEN_PREFIX = 'pss_';
const MAX_TOKEN_LENGTH = 1024;
const TOKEN_PATTERN = /^pss_([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{43})$/;

// In a function marked pure, so a bundle that does not use it leaves it out.
const claimsSchema = /* @__PURE__ */ (() =>
  z.strictObject({
    v: z.literal(1),
    /** Session id: the family every rotated refresh token of one login belongs to. */
    sid: z.string().check(z.minLength(1), z.maxLength(64)),
    uid: z.string().check(z.minLength(1), z.maxLength(64)),
    /** Issued at and expiry, epoch seconds. */
    iat: z.int().check(z.nonnegative()),
    exp: z.int().check(z.nonnegative()),
  }))();
export type SessionClaims = Omit<z.infer<typeof claimsSchema>, 'v'>;

function mac(key: Buffer, signedPart: string): Buffer {
  return createHmac('sha256', key).update(signedPart).digest();
}

/** Signs an access token for the session. */
export function signSessionToken(claims: SessionClaims, key: Buffer): string {
  const payload = Buffer.from(JSON.stringify({ v: 1, ...claims })).toString('base64url');
  const signedPart = `${SESSION_TOKEN_PREFIX}${payload}`;
  return `${signedPart}.${mac(key, signedPart).toString('base64url')}`;
}

/** True when the string looks like a session token (no signature check). */
export function looksLikeSessionToken(candidate: string): boolean {
  return candidate.startsWith(SESSION_TOKEN_PREFIX);
}

/**
 * The claims of an authentic token, or null. An expired token is null unless `allowExpired`:
 * logout accepts one, because ending a session must work even after its access token lapsed.
 */
export function verifySessionToken(
  token: string,
  key: Buffer,
  now: Date,
  options: { allowExpired?: boolean } = {},
): SessionClaims | null {
  // Stryker disable next-line ConditionalExpression,EqualityOperator: bounds the work only; every token signSessionToken makes (claims of at most 64-character ids) is far shorter.
  if (token.length > MAX_TOKEN_LENGTH) return null;
  const match = TOKEN_PATTERN.exec(token);
  if (!match?.[1] || !match[2]) return null;
  const payload = canonicalBase64url(match[1]);
  const signature = canonicalBase64url(match[2]);
  if (payload === undefined || signature === undefined) return null;
  const expected = mac(key, `${SESSION_TOKEN_PREFIX}${match[1]}`);
  // 43 base64url characters (the pattern) are always 32 bytes, the HMAC's length.
  if (!timingSafeEqual(signature, expected)) return null;
  const parsed = claimsSchema.safeParse(parseJson(payload.toString('utf8')));
  if (!parsed.success) return null;
  const { v: _version, ...claims } = parsed.data;
  if (!options.allowExpired && claims.exp * 1000 <= now.getTime()) return null;
  return claims;
}

/**
 * The bytes of a base64url text that is the one encoding of them, else undefined. Decoding ignores
 * the unused low bits of the last character, so without this check one token would have several
 * spellings, each its own rate-limit bucket and cache key.
 */
function canonicalBase64url(text: string): Buffer | undefined {
  const bytes = Buffer.from(text, 'base64url');
  return bytes.toString('base64url') === text ? bytes : undefined;
}

/** The value of a JSON text, or undefined when it is not JSON (which no schema accepts). */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    // Not JSON.
  }
  return undefined;
}
