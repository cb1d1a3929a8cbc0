import { describe, expect, it } from 'vitest';
import {
  API_TOKEN_LENGTH,
  generateApiToken,
  isWellFormedApiToken,
  tokenHint,
} from '../../../lambdas/auth/api-token.ts';
import { generateSecret, hashSecret, isWellFormedSecret } from '../../../lambdas/auth/secret-token.ts';
import { signSessionToken, verifySessionToken } from '../../../lambdas/auth/session-token.ts';

const KEY = Buffer.from('a-test-signing-key-of-at-least-32-characters');
const NOW = new Date('2026-11-22T12:00:00.000Z');
const claims = (overrides: object = {}) => ({
  sid: 'session-1',
  uid: 'user-1',
  iat: NOW.getTime() / 1000,
  exp: NOW.getTime() / 1000 + 900,
  ...overrides,
});

describe('prefixed secrets', () => {
  it('have the prefix, 36 base62 characters and a checksum that catches a typo', () => {
    const token = generateApiToken();
    expect(token).toMatch(/^psa_[0-9A-Za-z]{36}$/);
    expect(token).toHaveLength(API_TOKEN_LENGTH);
    expect(isWellFormedApiToken(token)).toBe(true);
    const last = token.at(-1) === 'a' ? 'b' : 'a';
    expect(isWellFormedApiToken(`${token.slice(0, -1)}${last}`)).toBe(false);
    const typo = `${token.slice(0, 10)}${token[10] === 'x' ? 'y' : 'x'}${token.slice(11)}`;
    expect(isWellFormedApiToken(typo)).toBe(false);
    expect(tokenHint(token)).toBe(`psa_…${token.slice(-4)}`);
  });

  it('are refused under another prefix, with another length or alphabet', () => {
    const refresh = generateSecret('psr_');
    expect(isWellFormedSecret('psr_', refresh)).toBe(true);
    expect(isWellFormedSecret('psm_', refresh)).toBe(false);
    expect(isWellFormedApiToken(refresh)).toBe(false);
    expect(isWellFormedSecret('psr_', `${refresh}0`)).toBe(false);
    expect(isWellFormedSecret('psr_', `${refresh.slice(0, -1)}-`)).toBe(false);
  });

  it('are stored as a SHA-256 that reveals nothing of them', () => {
    const token = generateApiToken();
    expect(hashSecret(token)).toMatch(/^[0-9a-f]{64}$/);
    expect(hashSecret(token)).not.toContain(token.slice(4, 10));
    expect(new Set(Array.from({ length: 200 }, generateApiToken)).size).toBe(200);
  });
});

describe('session access tokens', () => {
  it('round-trip their claims when signed with the same key and not expired', () => {
    const token = signSessionToken(claims(), KEY);
    expect(token).toMatch(/^pss_[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    expect(verifySessionToken(token, KEY, NOW)).toEqual(claims());
  });

  it('are refused when expired, unless logout asks to allow that', () => {
    const token = signSessionToken(claims({ exp: NOW.getTime() / 1000 - 1 }), KEY);
    expect(verifySessionToken(token, KEY, NOW)).toBeNull();
    expect(verifySessionToken(token, KEY, NOW, { allowExpired: true })).toMatchObject({ sid: 'session-1' });
  });

  it('are refused when signed with another key, tampered with, or malformed', () => {
    const token = signSessionToken(claims(), KEY);
    expect(verifySessionToken(token, Buffer.from('another-key-another-key-another-key!!'), NOW)).toBeNull();
    const [payload, signature] = token.slice(4).split('.') as [string, string];
    const forged = Buffer.from(JSON.stringify({ v: 1, ...claims({ uid: 'admin' }) })).toString('base64url');
    expect(verifySessionToken(`pss_${forged}.${signature}`, KEY, NOW)).toBeNull();
    expect(verifySessionToken(`pss_${payload}.${signature.slice(0, -1)}`, KEY, NOW)).toBeNull();
    expect(verifySessionToken(`pss_${payload}`, KEY, NOW)).toBeNull();
    expect(verifySessionToken(`pss_${'a'.repeat(2000)}.${signature}`, KEY, NOW)).toBeNull();
    // A correctly signed payload that is not our claims shape is refused too.
    const odd = signSessionToken({ ...claims(), sid: '' }, KEY);
    expect(verifySessionToken(odd, KEY, NOW)).toBeNull();
  });
});
