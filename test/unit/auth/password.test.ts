import { describe, expect, it } from 'vitest';
import {
  assertPasswordAcceptable,
  hashPassword,
  passwordProblems,
  UNMATCHABLE_PASSWORD_HASH,
  verifyPassword,
} from '../../../lambdas/auth/password.ts';
import { ValidationError } from '../../../lambdas/core/errors.ts';

describe('password rules', () => {
  it('accept a long passphrase and name every broken rule otherwise', () => {
    expect(passwordProblems('correct horse battery staple', 'ada@example.test')).toEqual([]);
    expect(passwordProblems('short')).toEqual(['must have at least 12 characters']);
    expect(passwordProblems('a'.repeat(129))).toEqual([
      'must have at most 128 characters',
      'must not be one repeated character',
    ]);
    expect(passwordProblems('Password1234')).toEqual(['is too common']);
    expect(passwordProblems('grace-hopper-1906', 'grace-hopper@example.test')).toEqual([
      'must not contain the email address',
    ]);
    expect(passwordProblems('            ')).toEqual(['must not be one repeated character']);
  });

  it('throw a 400 VALIDATION_ERROR with details for a weak password', () => {
    try {
      assertPasswordAcceptable('short', undefined, 'newPassword');
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).toJSON()).toMatchObject({
        error: 'VALIDATION_ERROR',
        details: [{ path: 'newPassword', message: 'must have at least 12 characters' }],
      });
    }
  });
});

describe('password hashes', () => {
  it('use scrypt with OWASP parameters and a per-user salt, and verify in constant time', async () => {
    const [first, second] = await Promise.all([
      hashPassword('correct horse battery'),
      hashPassword('correct horse battery'),
    ]);
    expect(first).toMatch(/^scrypt\$131072\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect(first).not.toBe(second);
    expect(await verifyPassword('correct horse battery', first)).toBe(true);
    expect(await verifyPassword('correct horse batterY', first)).toBe(false);
  });

  it('have an unmatchable stand-in with the same parameters for unknown users', async () => {
    expect(UNMATCHABLE_PASSWORD_HASH).toMatch(/^scrypt\$131072\$8\$1\$/);
    expect(await verifyPassword('', UNMATCHABLE_PASSWORD_HASH)).toBe(false);
    // A stored hash naming absurd parameters is refused rather than computed.
    expect(await verifyPassword('x', 'scrypt$4194304$8$1$c2FsdA$aGFzaA')).toBe(false);
  });
});
