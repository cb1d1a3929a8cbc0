import { createHash, randomInt, timingSafeEqual } from 'node:crypto';
import { crc32 } from 'node:zlib';

/**
 * API tokens look like `psa_<30 random base62><6 base62 CRC32 checksum>`, after GitHub's format:
 * the prefix lets secret scanners find a leaked token, the checksum lets the authorizer refuse a
 * mistyped or made-up token without touching the database. Only the SHA-256 is ever stored.
 */
export const API_TOKEN_PREFIX = 'psa_';
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const RANDOM_LENGTH = 30;
const CHECKSUM_LENGTH = 6;
export const API_TOKEN_LENGTH = API_TOKEN_PREFIX.length + RANDOM_LENGTH + CHECKSUM_LENGTH;
const TOKEN_PATTERN = new RegExp(`^${API_TOKEN_PREFIX}[0-9A-Za-z]{${RANDOM_LENGTH + CHECKSUM_LENGTH}}$`);

function base62(value: number, length: number): string {
  let out = '';
  let rest = value;
  for (let i = 0; i < length; i++) {
    out = ALPHABET[rest % 62] + out;
    rest = Math.floor(rest / 62);
  }
  return out;
}

function checksum(randomPart: string): string {
  return base62(crc32(randomPart), CHECKSUM_LENGTH);
}

/** A new token secret; show it once, store only hashApiToken(secret). */
export function generateApiToken(): string {
  let randomPart = '';
  for (let i = 0; i < RANDOM_LENGTH; i++) randomPart += ALPHABET[randomInt(62)];
  return `${API_TOKEN_PREFIX}${randomPart}${checksum(randomPart)}`;
}

/** True when the string has the token's shape and a matching checksum. */
export function isWellFormedApiToken(candidate: string): boolean {
  if (!TOKEN_PATTERN.test(candidate)) return false;
  const randomPart = candidate.slice(API_TOKEN_PREFIX.length, API_TOKEN_PREFIX.length + RANDOM_LENGTH);
  const given = Buffer.from(candidate.slice(-CHECKSUM_LENGTH));
  return timingSafeEqual(given, Buffer.from(checksum(randomPart)));
}

export function hashApiToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** What a listing may show of a token: enough to recognise it, never enough to use it. */
export function tokenHint(token: string): string {
  return `${API_TOKEN_PREFIX}…${token.slice(-4)}`;
}
