/**
 * Each credential family redacted whole in a realistic line, with the text around it kept: each case
 * fails when the pattern of its family is removed, because no other pattern redacts exactly that span.
 */
import { describe, expect, it } from 'vitest';
import { generateSecret } from '../../../lambdas/auth/secret-token.ts';
import { signSessionToken } from '../../../lambdas/auth/session-token.ts';
import { isSecretKey, REDACTED, redactSettings, redactText } from '../../../lambdas/synthesis/redact.ts';
import { ANTHROPIC_KEY_PREFIX, AWS_ACCESS_KEY_PREFIX } from '../../support/fake-secrets.ts';

// Credential-shaped strings are assembled at run time, so secret scanners do not flag this file.
const j = (...parts: string[]) => parts.join('');
/** A deterministic run of `length` characters from `alphabet` (mixed case and digits by default). */
const chars = (length: number, alphabet = 'Qw3rTy7uIo9pAs2dFg5hJk4lZx8cVb6nM1') =>
  Array.from({ length }, (_, index) => alphabet[(index * 5 + 2) % alphabet.length]).join('');

/** [family, the credential, the line it is pasted in ($ marks where)]. */
const families: Array<[family: string, credential: string, line: string]> = [
  ['API token', generateSecret('psa_'), 'request with $ was refused'],
  ['refresh token', generateSecret('psr_'), 'refresh with $ was refused'],
  ['magic-link token', generateSecret('psm_'), 'link /magic?t=$ expired'],
  [
    'session access token (signature and all)',
    signSessionToken(
      { sid: 'sess-1', uid: 'user-1', iat: 1_800_000_000, exp: 1_800_000_900 },
      Buffer.alloc(32, 7),
    ),
    'cookie ps_session=$ sent',
  ],
  [
    'Anthropic key',
    j(ANTHROPIC_KEY_PREFIX, 'api03-', chars(60, 'aB3-dE5_fG7hJ9')),
    'client built with $ today',
  ],
  ['Anthropic key cut short in a log line', j(ANTHROPIC_KEY_PREFIX, 'api03-x9'), 'client built with $…'],
  ['OpenAI project key', j('sk', '-proj-', chars(48, 'aB3-dE5_fG7hJ9kL')), 'OPENAI key $ in use'],
  ['Stripe secret key', j('sk', '_live_', chars(24)), 'charge with $ failed'],
  ['Stripe restricted key', j('rk', '_test_', chars(24)), 'charge with $ failed'],
  ['Stripe publishable key', j('pk', '_live_', chars(24)), 'checkout with $ failed'],
  ['Hugging Face token', j('hf', '_', chars(34)), 'pull with $ denied'],
  ['GitLab token', j('gl', 'pat-', chars(20, 'aB3-dE5_fG7')), 'clone with $ denied'],
  ['Google API key', j('AI', 'za', chars(35, 'aB3-dE5_fG7hJ9')), 'maps call with $ denied'],
  ['GitHub personal token', j('gh', 'p_', chars(36)), 'git push with $ denied'],
  ['GitHub OAuth token', j('gh', 'o_', chars(36)), 'git push with $ denied'],
  ['GitHub app token', j('gh', 's_', chars(36)), 'git push with $ denied'],
  ['GitHub fine-grained token', j('github', '_pat_', chars(22), '_', chars(59)), 'git push with $ denied'],
  ['Slack bot token', j('xo', 'xb-', '1234567890-', '9876543210987-', chars(24)), 'post with $ failed'],
  ['Slack user token', j('xo', 'xp-', '1234567890-', chars(12)), 'post with $ failed'],
  ['AWS access key id', j(AWS_ACCESS_KEY_PREFIX, 'QWERTYUIOP123456'), 'signed by $ at noon'],
  ['AWS session key id', j('AS', 'IA', 'QWERTYUIOP123456'), 'signed by $ at noon'],
  ['AWS secret access key', j('wJalrXUtnFEMI/K7MDENG/bPxRfiCY', 'EXAMPLEKEY'), 'secret $ leaked'],
  [
    'JWT',
    j(
      'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9',
      '.',
      'eyJzdWIiOiIxMjM0NTY3ODkwIn0',
      '.',
      chars(43, 'aB3-dE5_fG7'),
    ),
    'id $ rejected',
  ],
  [
    'PEM private key',
    j('-----BEGIN EC ', 'PRIVATE KEY-----\nMHcCAQEE', chars(64), '\n-----END EC ', 'PRIVATE KEY-----'),
    'key:\n$\nnext line',
  ],
  ['unterminated PEM key', j('-----BEGIN ', 'PRIVATE KEY-----\nMIIEv', chars(30), '\nmore'), 'key: $'],
];

describe('redactText, credential by credential', () => {
  it.each(families)('redacts the %s whole and keeps the line around it', (_, credential, line) => {
    const [before = '', after = ''] = line.split('$');

    expect(redactText(`${before}${credential}${after}`)).toBe(`${before}${REDACTED}${after}`);
  });

  it.each([
    ['Bearer', 'Authorization: Bearer abc.def-ghi_jkl', 'Authorization: Bearer [redacted]'],
    ['lower-case bearer', 'header bearer abcdefgh1234 sent', 'header bearer [redacted] sent'],
    ['Basic', 'Basic dXNlcjpwYXNz', 'Basic [redacted]'],
    ['Token', 'Token 0123456789abcdef, retry', 'Token [redacted], retry'],
    ['Digest', 'Digest username1234 sent', 'Digest [redacted] sent'],
    ['Authorization without a scheme', 'authorization: 0123abcd, retry', 'authorization: [redacted], retry'],
    ['Authorization with another scheme', 'Authorization:SharedKey acct', 'Authorization:[redacted] acct'],
  ])('redacts an authorization scheme (%s) and keeps the scheme name', (_, text, expected) => {
    expect(redactText(text)).toBe(expected);
  });

  it.each([
    ['URL password', 'db postgres://app:s3cr3t@db.internal/x', 'db postgres://app:[redacted]@db.internal/x'],
    [
      'URL password, https',
      'GET https://bob:pa55@example.test/a',
      'GET https://bob:[redacted]@example.test/a',
    ],
    [
      'JSON password',
      '{"password": "correct horse", "user": "bob"}',
      '{"password": "[redacted]", "user": "bob"}',
    ],
    ['JSON x-api-key', '{"x-api-key":"abc\\"def","n":1}', '{"x-api-key":"[redacted]","n":1}'],
    ['JSON cookie', '{"Cookie": "sid=1"}', '{"Cookie": "[redacted]"}'],
    ['password pair', 'password=hunter2; user=bob', 'password=[redacted]; user=bob'],
    ['quoted api key pair', "api-key: 'xyz123', ok", "api-key: '[redacted]', ok"],
    ['client secret pair', 'client_secret=abc&grant=x', 'client_secret=[redacted]&grant=x'],
    ['AWS secret pair', 'aws_secret_access_key = abc123', 'aws_secret_access_key = [redacted]'],
    ['token pair', 'token: abc123 expired', 'token: [redacted] expired'],
  ])('redacts the value of a %s and keeps its name', (_, text, expected) => {
    expect(redactText(text)).toBe(expected);
  });
});

/** Formats that reached the model before (issue "Security pass 2"); each fails when its pattern is removed. */
const pw = chars(14);
const pairs: Array<[format: string, text: string, expected: string]> = [
  [
    'env-style name with a prefix',
    j('MYSQL_ROOT_PASSWORD=', pw, ' docker run'),
    'MYSQL_ROOT_PASSWORD=[redacted] docker run',
  ],
  ['env-style API key with a colon', j('OPENAI_API_KEY: ', pw, '\nnext'), 'OPENAI_API_KEY: [redacted]\nnext'],
  ['env-style header key', j('X_API_KEY=', pw, '&page=2'), 'X_API_KEY=[redacted]&page=2'],
  ['env-style DB_PASS', j('DB_PASS=', pw, ' host=db'), 'DB_PASS=[redacted] host=db'],
  [
    'env-style name in a JSON key',
    j('{"MYSQL_PASSWORD": "', pw, ' two", "n": 1}'),
    '{"MYSQL_PASSWORD": "[redacted]", "n": 1}',
  ],
  [
    'Python dict password',
    j("{'password': 'correct ", pw, "', 'user': 'bob'}"),
    "{'password': '[redacted]', 'user': 'bob'}",
  ],
  ['Python dict api_key', j("{'api_key': '", pw, "'}"), "{'api_key': '[redacted]'}"],
  [
    'Python dict cookie',
    j("{'cookie': 'sid=", pw, "; theme=dark', 'n': 1}"),
    "{'cookie': '[redacted]', 'n': 1}",
  ],
  [
    'Python dict refresh_token',
    j("{'refresh_token': 'a\\'b ", pw, "', 'n': 1}"),
    "{'refresh_token': '[redacted]', 'n': 1}",
  ],
  [
    'double-quoted value with spaces',
    j('password="correct horse battery ', pw, '" user=bob'),
    'password="[redacted]" user=bob',
  ],
  [
    'single-quoted value with spaces',
    j("secret='correct horse ", pw, "', next"),
    "secret='[redacted]', next",
  ],
  ['quoted value with an escaped quote', j('api_key="a\\"b ', pw, '" ok'), 'api_key="[redacted]" ok'],
  ['unterminated quoted value', j('token="', pw), 'token="[redacted]'],
  [
    'URL password with a slash',
    j('redis://default:', 'pa/', pw, '@cache:6379/0'),
    'redis://default:[redacted]@cache:6379/0',
  ],
  [
    'Azure storage connection string',
    j(
      'DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=',
      chars(30, 'aB3+dE5/fG7'),
      '==;EndpointSuffix=core.windows.net',
    ),
    'DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=[redacted];EndpointSuffix=core.windows.net',
  ],
  ['Cookie header', j('Cookie: sid=', pw, '; theme=dark\nAccept: */*'), 'Cookie: [redacted]\nAccept: */*'],
  ['Set-Cookie header', j('set-cookie:id=', pw, '; Path=/'), 'set-cookie:[redacted]'],
  [
    'Cookie header in a quoted curl flag',
    j("-H 'Cookie: a=", pw, "; c=d' https://api.test"),
    "-H 'Cookie: [redacted]' https://api.test",
  ],
  [
    'curl -u',
    j('curl -s -u admin:', pw, ' https://api.test/x'),
    'curl -s -u admin:[redacted] https://api.test/x',
  ],
  [
    'curl -u, quoted',
    j("curl -u 'admin:", pw, "' https://api.test"),
    "curl -u 'admin:[redacted]' https://api.test",
  ],
  ['curl -u, attached', j('curl -uadmin:', pw, ' x'), 'curl -uadmin:[redacted] x'],
  [
    'curl --user=',
    j('curl https://api.test --user=admin:', pw),
    'curl https://api.test --user=admin:[redacted]',
  ],
  ['curl --user', j('curl --user admin:', pw, ' -X POST'), 'curl --user admin:[redacted] -X POST'],
];

describe('redactText, formats of security pass 2', () => {
  it.each(pairs)('redacts a %s and keeps the text around it', (_, text, expected) => {
    expect(redactText(text)).toBe(expected);
  });

  it.each([
    'max_token=512 and eos_token: </s>',
    'first pass: tokenize the input; second pass: rank',
    'bypass=true, compass: north, passes=3',
    'docker run -u 1000:1000 image',
    'curl -u admin https://api.test',
    'GET https://registry.example.test:8443/@scope/pkg',
    'signal: 5, design=new, passage: x',
    'cookies are small',
  ])('leaves %j as it is', (text) => {
    expect(redactText(text)).toBe(text);
  });
});

describe('redactSettings and isSecretKey', () => {
  it.each([
    'pwd',
    'pass',
    'DB_PASS',
    'db-pwd',
    'dbPwd',
    'sig',
    'url_sig',
    'urlSig',
    'Ocp-Apim-Subscription-Key',
  ])('treats the setting %s as a secret', (key) => {
    expect(isSecretKey(key)).toBe(true);
    expect(redactSettings({ [key]: 'x', maxTokens: 5 })).toEqual({ [key]: REDACTED, maxTokens: 5 });
  });

  it.each([
    'maxTokens',
    'passes',
    'passage',
    'signal',
    'design',
    'bypass',
    'Bypass',
    'compass',
    'passThrough',
    'pass_through',
    'numPasses',
    'assign',
    'signature',
  ])('keeps the ordinary setting %s', (key) => {
    expect(isSecretKey(key)).toBe(false);
  });

  it('treats a setting named just key or token, in any case, as a secret', () => {
    expect(['key', 'Key', 'KEY', 'token', 'Token'].map(isSecretKey)).toEqual([true, true, true, true, true]);
    expect(redactSettings({ key: 'abc', keyword: 'abc' })).toEqual({ key: REDACTED, keyword: 'abc' });
  });

  it('keeps nulls, numbers and booleans as they are, at any depth', () => {
    const settings = { stop: null, temperature: 0.2, stream: false, retry: { attempts: 3, jitter: null } };

    expect(redactSettings(settings)).toEqual(settings);
    expect(redactSettings(null)).toBeNull();
    expect(redactSettings(7)).toBe(7);
  });
});
