/*
 * The shape every opaque secret shares (prefix, 30 random base62, CRC32 checksum): making,
 * deriving and checking one, and the SHA-256 it is stored under.
 */
import { createHash, createHmac, randomInt, timingSafeEqual } from 'node:crypto';
import { crc32 } from 'node:zlib';

/**
 * The shape every opaque secret of the API shares, after GitHub's token format:
 * `<prefix><30 random base62><6 base62 CRC32 checksum>`. The prefix tells a secret scanner (and a
 * human) what leaked; the checksum lets the server refuse a mistyped or made-up value without a
 * database read. 30 base62 characters carry about 178 bits of randomness. Only the SHA-256 of a
 * secret is ever stored.
 */
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const RANDOM_LENGTH = 30;
const CHECKSUM_LENGTH = 6;
export const SECRET_BODY_LENGTH = RANDOM_LENGTH + CHECKSUM_LENGTH;

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

/** A new secret with the given prefix (`psa_`, `psr_`, `psm_`). */
export function generateSecret(prefix: string): string {
  let randomPart = '';
  for (let i = 0; i < RANDOM_LENGTH; i++) randomPart += ALPHABET[randomInt(62)];
  return `${prefix}${randomPart}${checksum(randomPart)}`;
}

/**
 * A secret derived from another under `key` (HMAC-SHA256): the same inputs always give the same
 * secret, and nobody without the key can compute it. The refresh-token rotation uses it so a
 * refresh repeated within the reuse interval answers the very pair the first one did.
 */
export function deriveSecret(prefix: string, key: Buffer, from: string): string {
  const bytes = Buffer.concat([
    createHmac('sha256', key).update(`${prefix}derive:1:${from}`).digest(),
    createHmac('sha256', key).update(`${prefix}derive:2:${from}`).digest(),
  ]);
  let randomPart = '';
  // 64 bytes for 30 characters: reject bytes ≥ 248 (= 4 × 62) so every character is uniform.
  for (const byte of bytes) {
    if (randomPart.length === RANDOM_LENGTH) break;
    if (byte < 248) randomPart += ALPHABET[byte % 62];
  }
  return `${prefix}${randomPart}${checksum(randomPart)}`;
}

/** True when the string has the prefix, the length, the alphabet and a matching checksum. */
export function isWellFormedSecret(prefix: string, candidate: string): boolean {
  if (candidate.length !== prefix.length + SECRET_BODY_LENGTH || !candidate.startsWith(prefix)) return false;
  const body = candidate.slice(prefix.length);
  if (!/^[0-9A-Za-z]+$/.test(body)) return false;
  const given = Buffer.from(body.slice(RANDOM_LENGTH));
  return timingSafeEqual(given, Buffer.from(checksum(body.slice(0, RANDOM_LENGTH))));
}

/** The SHA-256 (hex) under which a secret is stored and looked up. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}
