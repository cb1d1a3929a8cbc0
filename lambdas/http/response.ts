/*
 * The answers of an API function: JSON with the headers every answer carries, an empty 204, and
 * Set-Cookie headers.
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';

export type HttpEvent = APIGatewayProxyEvent;
export type HttpResult = APIGatewayProxyResult;

/** Browsers that once reached the API over HTTPS never try plain HTTP for it (or its subdomains) for a year. */
export const STRICT_TRANSPORT_SECURITY = {
  'strict-transport-security': 'max-age=31536000; includeSubDomains',
};

/** What every answer carries, whatever its body: no content sniffing, HTTPS only. */
export const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  ...STRICT_TRANSPORT_SECURITY,
};

const BASE_HEADERS = {
  'content-type': 'application/json',
  'cache-control': 'no-store',
  ...SECURITY_HEADERS,
};

export function json(statusCode: number, body: unknown, headers: Record<string, string> = {}): HttpResult {
  return { statusCode, headers: { ...BASE_HEADERS, ...headers }, body: JSON.stringify(body) };
}

/** A response without a body (204). */
export function noContent(headers: Record<string, string> = {}): HttpResult {
  const { 'content-type': _contentType, ...base } = BASE_HEADERS;
  return { statusCode: 204, headers: { ...base, ...headers }, body: '' };
}

/**
 * Adds Set-Cookie headers. They go in `multiValueHeaders`, the only way a Lambda proxy response
 * can carry the same header more than once.
 */
export function withCookies(result: HttpResult, cookies: readonly string[]): HttpResult {
  if (cookies.length === 0) return result;
  return { ...result, multiValueHeaders: { ...result.multiValueHeaders, 'set-cookie': [...cookies] } };
}

/**
 * A path of this API as the client reaches it: on the default execute-api endpoint the stage is
 * part of the path (`/prod/...`), behind a custom domain or the local gateway it is not.
 */
export function locationOf(event: HttpEvent, path: string): string {
  const fullPath = event.requestContext?.path ?? event.path;
  const stagePrefix = fullPath.endsWith(event.path)
    ? fullPath.slice(0, fullPath.length - event.path.length)
    : '';
  return `${stagePrefix}${path}`;
}
