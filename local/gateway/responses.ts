/**
 * API Gateway's side of a response: its own error responses, from the same table as the CDK stack
 * (lib/gateway-errors.ts), and a Lambda proxy result read the way API Gateway reads it.
 */
import { type OutgoingHttpHeaders, STATUS_CODES, validateHeaderName, validateHeaderValue } from 'node:http';
import { z } from 'zod';
import {
  GATEWAY_ERRORS,
  GATEWAY_RESPONSE_HEADERS,
  gatewayResponseHeaders,
  RATE_LIMITED_BODY,
  renderGatewayErrorBody,
} from '../../lib/gateway-errors.ts';

export interface Reply {
  status: number;
  headers: OutgoingHttpHeaders;
  body: Buffer;
}

export type GatewayResponseType =
  | 'UNAUTHORIZED'
  | 'ACCESS_DENIED'
  | 'MISSING_AUTHENTICATION_TOKEN'
  | 'REQUEST_TOO_LARGE'
  | 'BAD_REQUEST_PARAMETERS'
  | 'AUTHORIZER_FAILURE'
  | 'AUTHORIZER_CONFIGURATION_ERROR'
  | 'INTEGRATION_FAILURE'
  | 'INTEGRATION_TIMEOUT';

/** API Gateway's own status and x-amzn-ErrorType for each response type. */
const RESPONSE_TYPES: Record<GatewayResponseType, { status: number; errorType: string }> = {
  UNAUTHORIZED: { status: 401, errorType: 'UnauthorizedException' },
  ACCESS_DENIED: { status: 403, errorType: 'AccessDeniedException' },
  MISSING_AUTHENTICATION_TOKEN: { status: 403, errorType: 'MissingAuthenticationTokenException' },
  REQUEST_TOO_LARGE: { status: 413, errorType: 'RequestTooLargeException' },
  BAD_REQUEST_PARAMETERS: { status: 400, errorType: 'BadRequestException' },
  AUTHORIZER_FAILURE: { status: 500, errorType: 'AuthorizerFailureException' },
  AUTHORIZER_CONFIGURATION_ERROR: { status: 500, errorType: 'AuthorizerConfigurationException' },
  // A Lambda proxy function that fails or answers something malformed.
  INTEGRATION_FAILURE: { status: 502, errorType: 'InternalServerErrorException' },
  INTEGRATION_TIMEOUT: { status: 504, errorType: 'InternalServerErrorException' },
};

/**
 * API Gateway's own answer of `type`. `authorizerContext` is what a Deny came with, which the
 * ACCESS_DENIED body may name.
 */
export function gatewayResponse(
  type: GatewayResponseType,
  requestId: string,
  authorizerContext: Readonly<Record<string, string>> = {},
): Reply {
  const { status, errorType } = RESPONSE_TYPES[type];
  // Like API Gateway: a type without its own response falls back to DEFAULT_4XX / DEFAULT_5XX.
  const configured =
    GATEWAY_ERRORS.find((candidate) => candidate.type === type) ??
    GATEWAY_ERRORS.find((candidate) => candidate.type === (status >= 500 ? 'DEFAULT_5XX' : 'DEFAULT_4XX'));
  const body = configured
    ? renderGatewayErrorBody(configured, authorizerContext)
    : JSON.stringify({
        error: status >= 500 ? 'INTERNAL_ERROR' : 'VALIDATION_ERROR',
        message: 'The request failed.',
      });
  return {
    status: configured?.statusCode === undefined ? status : Number(configured.statusCode),
    headers: {
      ...gatewayResponseHeaders(configured),
      'x-amzn-requestid': requestId,
      'x-amzn-errortype': errorType,
    },
    body: Buffer.from(body),
  };
}

/** What the stack's web ACL answers a caller over its rate (lib/rate-limits.ts). */
export function rateLimitedResponse(requestId: string, retryAfterSeconds: number): Reply {
  return {
    status: 429,
    headers: {
      ...GATEWAY_RESPONSE_HEADERS,
      'retry-after': String(retryAfterSeconds),
      'x-amzn-requestid': requestId,
    },
    body: Buffer.from(JSON.stringify(RATE_LIMITED_BODY)),
  };
}

const headerValue = z.union([z.string(), z.number(), z.boolean()]);
const proxyResultSchema = z.object({
  statusCode: z.number().int().min(100).max(599),
  headers: z.record(z.string(), headerValue).nullish(),
  multiValueHeaders: z.record(z.string(), z.array(headerValue)).nullish(),
  body: z.string().nullish(),
  isBase64Encoded: z.boolean().nullish(),
});

/** Headers Node computes itself; a handler's value could only contradict the real body. */
const HOP_BY_HOP = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive']);

/** The HTTP reply for a Lambda proxy result, or undefined when API Gateway would call it malformed. */
export function proxyReply(result: unknown, requestId: string): Reply | undefined {
  const parsed = proxyResultSchema.safeParse(result);
  if (!parsed.success) return undefined;
  const { statusCode, headers, multiValueHeaders, body, isBase64Encoded } = parsed.data;
  // API Gateway merges both maps; a pair present in both appears once.
  const merged = new Map<string, { name: string; values: string[] }>();
  const add = (name: string, value: string | number | boolean) => {
    const key = name.toLowerCase();
    const entry = merged.get(key) ?? { name, values: [] };
    if (!entry.values.includes(String(value))) entry.values.push(String(value));
    merged.set(key, entry);
  };
  for (const [name, values] of Object.entries(multiValueHeaders ?? {}))
    for (const value of values) add(name, value);
  for (const [name, value] of Object.entries(headers ?? {})) add(name, value);

  // No prototype: a handler's header named `constructor` or `__proto__` is a header like any other.
  const replyHeaders: OutgoingHttpHeaders = Object.create(null);
  try {
    for (const [key, { name, values }] of merged) {
      if (HOP_BY_HOP.has(key) || key === 'x-amzn-requestid') continue;
      validateHeaderName(name);
      for (const value of values) validateHeaderValue(name, value);
      replyHeaders[name] = values.length === 1 ? values[0] : values;
    }
  } catch {
    return undefined;
  }
  if (!merged.has('content-type')) replyHeaders['Content-Type'] = 'application/json';
  replyHeaders['x-amzn-RequestId'] = requestId;
  return {
    status: statusCode,
    headers: replyHeaders,
    body: Buffer.from(body ?? '', isBase64Encoded ? 'base64' : 'utf8'),
  };
}

/** Node's reasons for not reading a request, and the gateway's JSON answer to each. */
const CLIENT_ERRORS: Record<string, { status: number; error: string; message: string }> = {
  ERR_HTTP_REQUEST_TIMEOUT: {
    status: 408,
    error: 'REQUEST_TIMEOUT',
    message: 'The request did not arrive whole in time: is its body shorter than its Content-Length?',
  },
  HPE_HEADER_OVERFLOW: {
    status: 431,
    error: 'VALIDATION_ERROR',
    message: 'The request headers are too large.',
  },
};
const UNREADABLE = {
  status: 400,
  error: 'VALIDATION_ERROR',
  message: 'The request is not valid HTTP (a header with a control character, a malformed line).',
};

/**
 * The raw HTTP answer to a request Node could not read (its `clientError`): the gateway's JSON
 * `{error, message}` with the headers of its own answers, and the connection closed.
 */
export function clientErrorResponse(code: string | undefined, requestId: string): string {
  const answer = (code && CLIENT_ERRORS[code]) || UNREADABLE;
  const body = JSON.stringify({ error: answer.error, message: answer.message });
  const headers = {
    ...gatewayResponse('BAD_REQUEST_PARAMETERS', requestId).headers,
    'content-length': Buffer.byteLength(body),
    connection: 'close',
  };
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${String(value)}`);
  return `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status]}\r\n${lines.join('\r\n')}\r\n\r\n${body}`;
}
