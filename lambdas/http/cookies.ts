/**
 * Cookie parsing and Set-Cookie serialization (RFC 6265), without dependencies, so the authorizer
 * and the handlers share one reading of the Cookie header.
 */

/** Name → value of a Cookie header. The first occurrence of a name wins, as browsers send the most specific path first. */
export function parseCookieHeader(header: string | undefined): Map<string, string> {
  const cookies = new Map<string, string>();
  if (!header) return cookies;
  for (const pair of header.split(';')) {
    const separator = pair.indexOf('=');
    if (separator <= 0) continue;
    const name = pair.slice(0, separator).trim();
    let value = pair.slice(separator + 1).trim();
    if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) value = value.slice(1, -1);
    if (name && !cookies.has(name)) cookies.set(name, value);
  }
  return cookies;
}

export interface CookieOptions {
  path: string;
  /** 0 deletes the cookie. */
  maxAgeSeconds: number;
  httpOnly: boolean;
  secure: boolean;
  sameSite: 'Strict' | 'Lax';
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const VALUE = /^[\x21\x23-\x2B\x2D-\x3A\x3C-\x5B\x5D-\x7E]*$/;

/** One Set-Cookie header value. Throws on a name or value a browser would misread. */
export function serializeCookie(name: string, value: string, options: CookieOptions): string {
  if (!TOKEN.test(name)) throw new Error(`Invalid cookie name: ${name}`);
  if (!VALUE.test(value)) throw new Error(`Invalid value for cookie ${name}`);
  if (!/^\/[\x21-\x3A\x3C-\x7E]*$/.test(options.path))
    throw new Error(`Invalid cookie path: ${options.path}`);
  const parts = [
    `${name}=${value}`,
    `Path=${options.path}`,
    `Max-Age=${Math.max(0, Math.floor(options.maxAgeSeconds))}`,
  ];
  if (options.maxAgeSeconds <= 0) parts.push('Expires=Thu, 01 Jan 1970 00:00:00 GMT');
  if (options.httpOnly) parts.push('HttpOnly');
  if (options.secure) parts.push('Secure');
  parts.push(`SameSite=${options.sameSite}`);
  return parts.join('; ');
}

type HeaderMap = Record<string, string | undefined> | null | undefined;
type MultiHeaderMap = Record<string, string[] | undefined> | null | undefined;

/**
 * The request's cookies as one Cookie header: API Gateway keeps only the last of repeated headers
 * in `headers`, and HTTP/2 clients may split cookies over several, so all values are joined.
 */
export function cookieHeaderOf(headers: HeaderMap, multiValueHeaders: MultiHeaderMap): string | undefined {
  const values: string[] = [];
  for (const [name, list] of Object.entries(multiValueHeaders ?? {})) {
    if (name.toLowerCase() === 'cookie' && list) values.push(...list);
  }
  if (values.length === 0) {
    for (const [name, value] of Object.entries(headers ?? {})) {
      if (name.toLowerCase() === 'cookie' && value) values.push(value);
    }
  }
  return values.length > 0 ? values.join('; ') : undefined;
}
