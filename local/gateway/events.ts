/**
 * The parts of a Lambda proxy event that come from the HTTP request, as API Gateway fills them.
 * Maps keyed by the request's names have no prototype: a header or parameter named `constructor`,
 * `toString` or `__proto__` is a name like any other.
 */
import type { IncomingMessage } from 'node:http';
import type { APIGatewayEventIdentity } from 'aws-lambda';

export function requestHeaders(request: IncomingMessage): {
  headers: Record<string, string>;
  multiValueHeaders: Record<string, string[]>;
} {
  const headers: Record<string, string> = Object.create(null);
  const multiValueHeaders: Record<string, string[]> = Object.create(null);
  const add = (name: string, value: string) => {
    // Like API Gateway: names as sent, the last value in `headers`, all of them in `multiValueHeaders`.
    headers[name] = value;
    multiValueHeaders[name] = [...(multiValueHeaders[name] ?? []), value];
  };
  const raw = request.rawHeaders;
  for (let index = 0; index + 1 < raw.length; index += 2) add(raw[index] ?? '', raw[index + 1] ?? '');
  const sourceIp = clientIp(request);
  const forwardedFor = Object.keys(headers).find((name) => name.toLowerCase() === 'x-forwarded-for');
  if (forwardedFor === undefined) add('X-Forwarded-For', sourceIp);
  add('X-Forwarded-Port', String(request.socket.localPort ?? ''));
  add('X-Forwarded-Proto', 'http');
  return { headers, multiValueHeaders };
}

export function queryParameters(searchParams: URLSearchParams): {
  single: Record<string, string> | null;
  multi: Record<string, string[]> | null;
} {
  const single: Record<string, string> = Object.create(null);
  const multi: Record<string, string[]> = Object.create(null);
  for (const [name, value] of searchParams) {
    single[name] = value;
    multi[name] = [...(multi[name] ?? []), value];
  }
  return Object.keys(single).length === 0 ? { single: null, multi: null } : { single, multi };
}

export function clientIp(request: IncomingMessage): string {
  return (request.socket.remoteAddress ?? '127.0.0.1').replace(/^::ffff:/, '');
}

export function identity(request: IncomingMessage): APIGatewayEventIdentity {
  return {
    accessKey: null,
    accountId: null,
    apiKey: null,
    apiKeyId: null,
    caller: null,
    clientCert: null,
    cognitoAuthenticationProvider: null,
    cognitoAuthenticationType: null,
    cognitoIdentityId: null,
    cognitoIdentityPoolId: null,
    principalOrgId: null,
    sourceIp: clientIp(request),
    user: null,
    userAgent: request.headers['user-agent'] ?? null,
    userArn: null,
  };
}

/** A stable six-character id per resource path, like API Gateway's resource ids. */
export function resourceId(path: string): string {
  let hash = 0;
  for (const char of path) hash = (hash * 31 + (char.codePointAt(0) ?? 0)) >>> 0;
  return hash.toString(36).padStart(6, '0').slice(-6);
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** API Gateway's `requestTime`, e.g. `22/Nov/2026:12:00:00 +0000`. */
export function formatRequestTime(date: Date): string {
  const two = (value: number) => String(value).padStart(2, '0');
  return `${two(date.getUTCDate())}/${MONTHS[date.getUTCMonth()]}/${date.getUTCFullYear()}:${two(date.getUTCHours())}:${two(date.getUTCMinutes())}:${two(date.getUTCSeconds())} +0000`;
}
