import { describe, expect, it } from 'vitest';
import { isSecretKey, redactSettings, redactText } from '../../../lambdas/synthesis/redact.ts';
import { byteLength, shorten, truncateUtf8 } from '../../../lambdas/synthesis/text-budget.ts';
import { ANTHROPIC_KEY_PREFIX, AWS_ACCESS_KEY_PREFIX } from '../../support/fake-secrets.ts';

describe('redaction', () => {
  it('treats credential-named settings as secrets, but not token limits', () => {
    for (const key of [
      'apiKey',
      'api_key',
      'client_secret',
      'password',
      'token',
      'accessToken',
      'Authorization',
    ]) {
      expect(isSecretKey(key), key).toBe(true);
    }
    for (const key of ['maxTokens', 'max_tokens', 'topK', 'model', 'instructions', 'stopTokens']) {
      expect(isSecretKey(key), key).toBe(false);
    }
  });

  it('replaces credentials recognisable in free text', () => {
    const cases: [string, string][] = [
      ['token psa_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789', 'token [redacted]'],
      [`key ${ANTHROPIC_KEY_PREFIX}api03-abcdefgh_ijkl`, 'key [redacted]'],
      [`aws ${AWS_ACCESS_KEY_PREFIX}ABCDEFGHIJKLMNOP here`, 'aws [redacted] here'],
      ['Authorization: Bearer abc.def-ghi_jkl', 'Authorization: Bearer [redacted]'],
      ['password=hunter2; user=bob', 'password=[redacted]; user=bob'],
      ['api_key: "xyz123"', 'api_key: "[redacted]"'],
      ['db postgres://app:s3cret@db.internal/x', 'db postgres://app:[redacted]@db.internal/x'],
      ['maxTokens: 256 and max_tokens=512', 'maxTokens: 256 and max_tokens=512'],
    ];
    for (const [input, expected] of cases) expect(redactText(input)).toBe(expected);
  });

  it('redacts nested settings and leaves the original untouched', () => {
    const settings = {
      model: 'm',
      headers: { 'x-api-key': 'k-1', list: ['Bearer abcdefghijk'] },
      maxTokens: 5,
    };

    expect(redactSettings(settings)).toEqual({
      model: 'm',
      headers: { 'x-api-key': '[redacted]', list: ['Bearer [redacted]'] },
      maxTokens: 5,
    });
    expect(settings.headers['x-api-key']).toBe('k-1');
  });
});

describe('byte budgets', () => {
  it('never splits a character when truncating', () => {
    expect(truncateUtf8('a🔥b', 4)).toBe('a');
    expect(truncateUtf8('a🔥b', 5)).toBe('a🔥');
    expect(truncateUtf8('数据', 5)).toBe('数');
    expect(truncateUtf8('abc', 0)).toBe('');
  });

  it('shortens to at most the given bytes, marker included, and says how much was left out', () => {
    const text = 'x'.repeat(1_000);

    const short = shorten(text, 100);

    expect(byteLength(short)).toBeLessThanOrEqual(100);
    expect(short).toMatch(/^x+…\[truncated \d+ bytes\]$/);
    const kept = short.indexOf('…');
    expect(short).toContain(`[truncated ${1_000 - kept} bytes]`);
    expect(shorten('short', 100)).toBe('short');
  });
});
