/**
 * Keeps credentials out of what is sent to a model. Settings and signal messages are written by
 * users, who sometimes paste a key or a connection string into them; the prompt must not carry
 * them to a third party, and the model must not copy them into a proposal.
 */

export const REDACTED = '[redacted]';

/** Setting names (lower-cased, without - and _) whose values are credentials. */
const SECRET_KEY_NAMES = [
  'apikey',
  'secret',
  'password',
  'passwd',
  'passphrase',
  'authorization',
  'authtoken',
  'accesstoken',
  'refreshtoken',
  'bearertoken',
  'sessiontoken',
  'idtoken',
  'privatekey',
  'credential',
  'cookie',
  'signingkey',
  'accesskey',
  'connectionstring',
];

/** True for setting names like apiKey, client_secret or token, but not maxTokens or topK. */
export function isSecretKey(key: string): boolean {
  const name = key.toLowerCase().replace(/[-_\s]/g, '');
  if (name === 'token' || name === 'key') return true;
  return SECRET_KEY_NAMES.some((secret) => name.includes(secret));
}

/** Credential shapes that are recognisable in free text; each is replaced whole. */
const SECRET_PATTERNS: readonly [RegExp, string][] = [
  // This API's own tokens (lambdas/auth/api-token.ts).
  [/\bpsa_[0-9A-Za-z]{20,}/g, REDACTED],
  [/\bsk-ant-[A-Za-z0-9_-]{8,}/g, REDACTED],
  [/\bsk-[A-Za-z0-9_-]{16,}/g, REDACTED],
  [/\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g, REDACTED],
  [/\bgh[pousr]_[A-Za-z0-9]{20,}/g, REDACTED],
  [/\bxox[abprs]-[A-Za-z0-9-]{10,}/g, REDACTED],
  [/\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g, REDACTED],
  [/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi, `$1 ${REDACTED}`],
  // user:password@host in URLs. The scheme's length is bounded so that matching stays linear on
  // long texts like "a.a.a.…", where every position is a word boundary.
  [/\b([a-z][a-z0-9+.-]{0,31}:\/\/[^\s:/@]{1,256}):[^\s@/]{1,256}@/gi, `$1:${REDACTED}@`],
  // key=value and key: value forms.
  [
    /\b(password|passwd|pwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token|token)(\s*[=:]\s*)(["']?)[^\s"',;&]+/gi,
    `$1$2$3${REDACTED}`,
  ],
];

/** Replaces the credentials recognisable in a text with a marker. */
export function redactText(text: string): string {
  let result = text;
  for (const [pattern, replacement] of SECRET_PATTERNS) result = result.replace(pattern, replacement);
  return result;
}

/** A deep copy of settings with secret-named values replaced and credentials in strings redacted. */
export function redactSettings(value: unknown): unknown {
  if (typeof value === 'string') return redactText(value);
  if (Array.isArray(value)) return value.map(redactSettings);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([key, child]) => [key, isSecretKey(key) ? REDACTED : redactSettings(child)]),
    );
  }
  return value;
}
