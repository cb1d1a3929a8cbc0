import { randomBytes, scryptSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  assertPasswordAcceptable,
  passwordProblems,
  verifyPassword,
} from '../../../lambdas/auth/password.ts';
import { deriveSecret, hashSecret, isWellFormedSecret } from '../../../lambdas/auth/secret-token.ts';
import { signSessionToken, verifySessionToken } from '../../../lambdas/auth/session-token.ts';
import { ValidationError } from '../../../lambdas/core/errors.ts';
import { cheapPasswordHash } from './fakes.ts';

// The stored and presented formats at their edges: what must keep working across deploys, and
// what must be refused however it is malformed.

const b64 = (buffer: Buffer) => buffer.toString('base64url');
const stored = (parts: Array<string | number>) => parts.join('$');

describe('stored password hashes', () => {
  it('verify with the parameters the hash names, not the current defaults', async () => {
    const hash = cheapPasswordHash('correct horse battery');
    expect(await verifyPassword('correct horse battery', hash)).toBe(true);
    expect(await verifyPassword('correct horse batterY', hash)).toBe(false);
  });

  it('normalise the password (NFKC) before deriving, so the same passphrase typed differently matches', async () => {
    const hash = cheapPasswordHash('ﬁsh and chips galore');
    expect(await verifyPassword('fish and chips galore', hash)).toBe(true);
  });

  it('verify with up to 4 parallel lanes (p), and are refused above it', async () => {
    const salt = randomBytes(16);
    const hash = (p: number) =>
      stored([
        'scrypt',
        1024,
        8,
        p,
        b64(salt),
        b64(scryptSync('correct horse battery', salt, 32, { N: 1024, r: 8, p })),
      ]);
    expect(await verifyPassword('correct horse battery', hash(4))).toBe(true);
    expect(await verifyPassword('correct horse battery', hash(5))).toBe(false);
  });

  it('are refused, not thrown on, when they name parameters scrypt refuses', async () => {
    const salt = b64(randomBytes(16));
    const key = b64(randomBytes(32));
    // 1 GiB of memory (over the bound), and an N that is not a power of two.
    expect(await verifyPassword('x', stored(['scrypt', 2 ** 20, 8, 1, salt, key]))).toBe(false);
    expect(await verifyPassword('x', stored(['scrypt', 1000, 8, 1, salt, key]))).toBe(false);
  });

  it('are refused, never thrown on, when another scheme, without salt or hash, or truncated', async () => {
    const password = 'correct horse battery';
    const salt = randomBytes(16);
    const key = scryptSync(password, salt, 32, { N: 1024, r: 8, p: 1 });
    const unsalted = scryptSync(password, Buffer.alloc(0), 32, { N: 1024, r: 8, p: 1 });
    expect(await verifyPassword(password, stored(['scrypt', 1024, 8, 1, b64(salt), b64(key)]))).toBe(true);
    expect(await verifyPassword(password, stored(['pbkdf2', 1024, 8, 1, b64(salt), b64(key)]))).toBe(false);
    expect(await verifyPassword(password, stored(['scrypt', 1024, 8, 1, '', b64(unsalted)]))).toBe(false);
    expect(await verifyPassword(password, stored(['scrypt', 1024, 8, 1, b64(salt)]))).toBe(false);
    expect(
      await verifyPassword(password, stored(['scrypt', 1024, 8, 1, b64(salt), b64(key.subarray(0, 16))])),
    ).toBe(false);
  });
});

describe('password rules at their edges', () => {
  it('accept 12 and 128 characters, counted after normalisation', () => {
    expect(passwordProblems('abcdefghijk1')).toEqual([]);
    expect(passwordProblems('abcdefghijk')).toEqual(['must have at least 12 characters']);
    const long = `${'abcdefghij'.repeat(12)}abcdefgh`;
    expect(long).toHaveLength(128);
    expect(passwordProblems(long)).toEqual([]);
  });

  it('refuse a password made only of whitespace, even mixed', () => {
    expect(passwordProblems(' \t'.repeat(6))).toEqual(['must not be one repeated character']);
  });

  it('refuse the email’s name from four characters on, and only when an email is given', () => {
    expect(passwordProblems('my name is adah, hello', 'Adah@example.test')).toEqual([
      'must not contain the email address',
    ]);
    expect(passwordProblems('my name is ada, hello', 'ada@example.test')).toEqual([]);
    expect(passwordProblems('my name is ada, hello')).toEqual([]);
  });

  it('answer a 400 for the field, naming every broken rule in one message', () => {
    expect(() => assertPasswordAcceptable('correct horse battery', 'ada@example.test')).not.toThrow();
    try {
      assertPasswordAcceptable('aaaa', undefined);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).message).toBe(
        'The password is too weak: it must have at least 12 characters; must not be one repeated character.',
      );
      expect((error as ValidationError).details).toEqual([
        { path: 'password', message: 'must have at least 12 characters' },
        { path: 'password', message: 'must not be one repeated character' },
      ]);
    }
  });
});

describe('prefixed secrets', () => {
  // GitHub's format: CRC32 of the random part in 6 base62 digits. Secrets issued before a deploy
  // must stay well-formed after it, so the checksum is pinned.
  const body = 'A'.repeat(30);

  it('keep their checksum from one release to the next', () => {
    expect(isWellFormedSecret('psa_', `psa_${body}0uCPlr`)).toBe(true);
    expect(isWellFormedSecret('psa_', `psa_${body}0uCPls`)).toBe(false);
  });

  it('are refused with a character outside base62 anywhere, even under a matching checksum', () => {
    expect(isWellFormedSecret('psr_', `psr_-${'A'.repeat(29)}01mwb9`)).toBe(false);
    expect(isWellFormedSecret('psr_', `psr_${'A'.repeat(29)}-29OAe0`)).toBe(false);
    expect(isWellFormedSecret('psr_', `psr_${'B'.repeat(15)}_${'B'.repeat(14)}44We3T`)).toBe(false);
  });

  it('derive the same successor from the same token and key, across releases', () => {
    const key = Buffer.from('derivation-test-key');
    // Inputs whose HMAC bytes include 248 and above (rejected for uniformity), and one that needs
    // the second HMAC block; the expected values are the SHA-256 of the derived secrets.
    const derived = (from: string) => deriveSecret('psr_', key, from);
    expect(hashSecret(derived('refresh-2'))).toBe(
      '49e19946fae2b9c8f9312279bb575de16a97c49790e4be8db4b98d03d19342f5',
    );
    expect(hashSecret(derived('refresh-17'))).toBe(
      'a7aa510ed0fc9041bd688470454d9c1cb045efa8c39aa819a45a23443727459a',
    );
    expect(hashSecret(derived('refresh-18'))).toBe(
      '320f3c1ac0f878540d18984f0ed201b6c6044aa70d528aed1bc646daa207615a',
    );
    expect(isWellFormedSecret('psr_', derived('refresh-18'))).toBe(true);
    expect(derived('refresh-2')).not.toBe(deriveSecret('psr_', Buffer.from('another-key'), 'refresh-2'));
  });
});

describe('session access tokens at their expiry', () => {
  it('are valid until the second before exp, and refused from exp on', () => {
    const key = Buffer.from('a-test-signing-key-of-at-least-32-characters');
    const now = new Date('2026-11-22T12:00:00.000Z');
    const token = signSessionToken(
      { sid: 's', uid: 'u', iat: now.getTime() / 1000 - 60, exp: now.getTime() / 1000 },
      key,
    );
    expect(verifySessionToken(token, key, now)).toBeNull();
    expect(verifySessionToken(token, key, new Date(now.getTime() - 1))).toMatchObject({ sid: 's', uid: 'u' });
  });
});
