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
  'subscriptionkey',
];

/**
 * Short credential words that count only as the whole last word of a setting name (pass, DB_PASS,
 * db-pwd, dbPwd, url_sig), since inside other words they are ordinary (passes, bypass, signal, design).
 */
const SECRET_LAST_WORD = [/(?:^|[-_\s])(?:pass|pwd|sig)$/i, /[a-z0-9](?:Pass|Pwd|Sig)$/];

/** True for setting names like apiKey, client_secret, token or DB_PASS, but not maxTokens or topK. */
export function isSecretKey(key: string): boolean {
  const name = key.toLowerCase().replace(/[-_\s]/g, '');
  if (name === 'token' || name === 'key') return true;
  if (SECRET_LAST_WORD.some((pattern) => pattern.test(key))) return true;
  return SECRET_KEY_NAMES.some((secret) => name.includes(secret));
}

/**
 * Keys whose quoted value is a credential, inside free text such as a pasted request body: JSON
 * (`"password": "…"`) or a Python dict (`'password': '…'`); the value keeps its quotes.
 */
const QUOTED_SECRET_FIELD =
  /((["'])(?:password|passwd|pwd|passphrase|secret|client_secret|api[_-]?key|apikey|x-api-key|access[_-]?token|refresh[_-]?token|auth[_-]?token|id[_-]?token|token|private[_-]?key|secret[_-]?access[_-]?key|aws_secret_access_key|authorization|cookie)\2\s*:\s*)(?:(")(?:[^"\\]|\\.)*"|(')(?:[^'\\]|\\.)*')/gi;

/**
 * `name=value`, `name: value`, `NAME="a quoted value"`. The name may end an env-style name
 * (MYSQL_ROOT_PASSWORD, OPENAI_API_KEY: `\b` does not fire after `_`); `pass` counts only there
 * (DB_PASS: as a word it is prose) and `token` never (max_token, eos_token are model settings). A
 * quoted value is redacted to its closing quote, spaces and all; an unquoted one to a space or
 * separator.
 */
const SECRET_PAIR =
  /(?<![A-Za-z0-9])(password|passwd|pwd|passphrase|secret|client[_-]?secret|api[_-]?key|access[_-]?token|auth[_-]?token|aws[_-]?secret[_-]?access[_-]?key|(?<!_)token|account[_-]?key|(?<=_)pass)(["']?\s*[=:]\s*)(?:(")(?:[^"\\\n]|\\.)*(")|(')(?:[^'\\\n]|\\.)*(')|(["']?)[^\s"',;&]+)/gi;

/** Credential shapes that are recognisable in free text; each is replaced whole. */
const SECRET_PATTERNS: readonly [RegExp, string][] = [
  // PEM private keys, whole (an unterminated one to the end of the text).
  [/-----BEGIN [A-Z ]*PRIVATE KEY-----(?:[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----|[\s\S]*$)/g, REDACTED],
  // This API's own secrets: API tokens, refresh tokens, magic links, session access tokens.
  // A session token first: the shorter prefix pattern below would stop at its dot and leave
  // the signature in the text.
  [/\bpss_[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/g, REDACTED],
  [/\bps[asrm]_[0-9A-Za-z]{20,}/g, REDACTED],
  [/\bsk-ant-[A-Za-z0-9_-]{8,}/g, REDACTED],
  [/\bsk-[A-Za-z0-9_-]{16,}/g, REDACTED],
  // Stripe live and test keys (secret, restricted, publishable).
  [/\b(?:sk|rk|pk)_(?:live|test)_[0-9A-Za-z]{10,}/g, REDACTED],
  // Hugging Face, GitLab, Google API keys, GitHub, Slack.
  [/\bhf_[A-Za-z0-9]{20,}/g, REDACTED],
  [/\bglpat-[A-Za-z0-9_-]{20,}/g, REDACTED],
  [/\bAIza[0-9A-Za-z_-]{35}\b/g, REDACTED],
  [/\bgh[pousr]_[A-Za-z0-9]{20,}/g, REDACTED],
  [/\bgithub_pat_[A-Za-z0-9_]{20,}/g, REDACTED],
  [/\bxox[abprs]-[A-Za-z0-9-]{10,}/g, REDACTED],
  // AWS access key ids, and secret access keys: 40 characters of base64 with both cases and a
  // digit (a git SHA, lower-case hex, stays).
  [/\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g, REDACTED],
  [
    /(?<![A-Za-z0-9/+=])(?=[A-Za-z0-9/+]{0,39}[A-Z])(?=[A-Za-z0-9/+]{0,39}[a-z])(?=[A-Za-z0-9/+]{0,39}[0-9])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])/g,
    REDACTED,
  ],
  // JWTs (three base64url parts, the first a JSON header).
  [/\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}/g, REDACTED],
  [/\b(Bearer|Basic|Token|Digest)\s+[A-Za-z0-9._~+/=-]{8,}/gi, `$1 ${REDACTED}`],
  // An Authorization header with any other scheme or none.
  [/\b(Authorization\s*:\s*)(?!(?:Bearer|Basic|Token|Digest) \[redacted\])[^\s,;]+/gi, `$1${REDACTED}`],
  // user:password@host in URLs; the password may hold a "/", but host:port/path@… is no password.
  // The scheme's length is bounded so that matching stays linear on long texts like "a.a.a.…",
  // where every position is a word boundary.
  [/\b([a-z][a-z0-9+.-]{0,31}:\/\/[^\s:/@]{1,256}):(?!\d*[/?#])[^\s@]{1,256}@/gi, `$1:${REDACTED}@`],
  // A Cookie (or Set-Cookie) header: every cookie in it, to the end of the line or a quote.
  [/\b(Cookie\s*:\s*)[^\r\n"']+/gi, `$1${REDACTED}`],
  // curl -u user:password and --user user:password (the user is kept).
  [/(\bcurl\b[^\n]{0,500}?\s(?:-u\s*|--user[=\s]\s*)["']?[^\s:"']+:)[^\s"']+/g, `$1${REDACTED}`],
  // "password": "…" and friends inside pasted JSON or a Python dict.
  [QUOTED_SECRET_FIELD, `$1$3$4${REDACTED}$3$4`],
  // key=value and key: value forms, env-style names and quoted values included.
  [SECRET_PAIR, `$1$2$3$5$7${REDACTED}$4$6`],
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
