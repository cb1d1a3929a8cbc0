/*
 * Passwords: scrypt hashes stored with their parameters, constant-time verification, and the
 * rules a new password must meet (length, not common, not the email's name).
 */
import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from 'node:crypto';
import { ValidationError } from '../core/errors.ts';

/**
 * Password hashes: scrypt with OWASP's recommended parameters (N=2^17, r=8, p=1) and a per-user
 * 16-byte salt, stored as `scrypt$N$r$p$salt$hash` so parameters can be raised later. Node's
 * default `maxmem` (32 MiB) is below the 128 MiB these parameters need, hence the explicit bound.
 */
const PARAMS = { N: 2 ** 17, r: 8, p: 1 } as const;
const KEY_LENGTH = 32;
/**
 * Stored hashes name their own parameters; none may make a verification a DoS: scrypt refuses
 * any that need more memory than `maxmem` (which bounds N·r), and p, which multiplies the time, is capped.
 */
const MAX_MEMORY = 256 * 1024 * 1024;
const MAX_P = 4;

function derive(
  password: string,
  salt: Buffer,
  params: { N: number; r: number; p: number },
): Promise<Buffer> {
  const options: ScryptOptions = { ...params, maxmem: MAX_MEMORY };
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFKC'), salt, KEY_LENGTH, options, (error, key) =>
      error ? reject(error) : resolve(key),
    );
  });
}

/** Hashes a password for storage. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, PARAMS);
  return ['scrypt', PARAMS.N, PARAMS.r, PARAMS.p, salt.toString('base64url'), key.toString('base64url')].join(
    '$',
  );
}

/** A stored `scrypt$N$r$p$salt$hash` split into its fields (nothing checked yet); null when not scrypt. */
function parseStoredHash(stored: string) {
  const [scheme, n, r, p, salt = '', hash = ''] = stored.split('$');
  if (scheme !== 'scrypt') return null;
  return { params: { N: Number(n), r: Number(r), p: Number(p) }, salt, hash };
}

/** Whether a stored hash was made with today's parameters (a kept hash may predate a change of them). */
export function hashHasCurrentParameters(stored: string): boolean {
  const parsed = parseStoredHash(stored);
  return (
    parsed !== null &&
    parsed.params.N === PARAMS.N &&
    parsed.params.r === PARAMS.r &&
    parsed.params.p === PARAMS.p &&
    Buffer.from(parsed.salt, 'base64url').length === 16 &&
    Buffer.from(parsed.hash, 'base64url').length === KEY_LENGTH
  );
}

/** Checks a password against a stored hash in constant time. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parseStoredHash(stored);
  if (!parsed?.salt || !parsed.hash || parsed.params.p > MAX_P) return false;
  const expected = Buffer.from(parsed.hash, 'base64url');
  // Parameters scrypt refuses (too much memory, N not a power of two) match no password.
  const key = await derive(password, Buffer.from(parsed.salt, 'base64url'), parsed.params).catch(() => null);
  return key !== null && key.length === expected.length && timingSafeEqual(key, expected);
}

/**
 * Memory of the functions that hash or verify passwords (scrypt at N=2^17, r=8: 128 MiB a hash).
 * Lambda allots CPU in proportion to memory: at the 256 MB default one hash leaves little headroom
 * and takes seconds on a fraction of a vCPU; 1024 MB brings it well under a second.
 */
export const PASSWORD_HASHING_MEMORY_MB = 1024;

/**
 * A well-formed hash with the real parameters that no password matches (its "hash" is random
 * bytes, not derived from anything). Verifying against it costs exactly one real verification, so
 * an unknown email answers in the same time as a wrong password.
 */
export const UNMATCHABLE_PASSWORD_HASH = [
  'scrypt',
  PARAMS.N,
  PARAMS.r,
  PARAMS.p,
  randomBytes(16).toString('base64url'),
  randomBytes(KEY_LENGTH).toString('base64url'),
].join('$');

const PASSWORD_RULES = { minLength: 12, maxLength: 128 } as const;

/** Too common to be a password, whatever their length. */
const COMMON_PASSWORDS = new Set([
  '123456789012',
  '1234567890123',
  'password1234',
  'password12345',
  'passwordpassword',
  'qwertyuiopasdf',
  'qwerty123456',
  'iloveyou1234',
  'letmein12345',
  'changeme1234',
  'administrator',
  'welcome12345',
]);

/**
 * The password rules (OWASP ASVS: length over composition): 12 to 128 characters, not one
 * repeated character, not a well-known password, not containing the account's email name.
 * Returns the broken rules; empty means acceptable.
 */
export function passwordProblems(password: string, email?: string): string[] {
  const problems: string[] = [];
  const length = [...password.normalize('NFKC')].length;
  if (length < PASSWORD_RULES.minLength)
    problems.push(`must have at least ${PASSWORD_RULES.minLength} characters`);
  if (length > PASSWORD_RULES.maxLength)
    problems.push(`must have at most ${PASSWORD_RULES.maxLength} characters`);
  if (password.trim() === '' || new Set(password).size === 1)
    problems.push('must not be one repeated character');
  const lower = password.toLowerCase();
  if (COMMON_PASSWORDS.has(lower)) problems.push('is too common');
  // Stryker disable next-line OptionalChaining: split always yields a first element; `?.` only satisfies the type.
  const emailName = email?.split('@')[0]?.toLowerCase();
  if (emailName && emailName.length >= 4 && lower.includes(emailName))
    problems.push('must not contain the email address');
  return problems;
}

/** Throws a 400 that names every broken rule, for the field `field`. */
export function assertPasswordAcceptable(
  password: string,
  email: string | undefined,
  field = 'password',
): void {
  const problems = passwordProblems(password, email);
  if (problems.length > 0) {
    throw new ValidationError(`The password is too weak: it ${problems.join('; ')}.`, {
      details: problems.map((message) => ({ path: field, message })),
    });
  }
}
