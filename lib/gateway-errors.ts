/**
 * The bodies and headers API Gateway itself answers with (no Lambda involved), shaped like every
 * handler error: `{"error": CODE, "message": text}`. Plain data without CDK imports, so the local
 * gateway can give the very same answers. Messages are static text, except ACCESS_DENIED's, which
 * is the authorizer's own reason (`$context.authorizer.refusal`, text the authorizer keeps free of
 * quotes and backslashes), so a body is always valid JSON and never echoes internals. Gateway
 * response templates get no VTL (no `#if` on the status), which is why each response type that
 * needs its own code has its own entry.
 */
import { CSRF_REFUSAL_CONTEXT_KEY } from '../lambdas/auth/csrf.ts';

export interface GatewayError {
  /** An API Gateway gateway response type (aws-apigateway ResponseType). */
  readonly type: string;
  /** Overrides the status API Gateway would use; absent keeps the type's own status. */
  readonly statusCode?: string;
  readonly error: string;
  readonly message: string;
  /** Headers this response sends besides GATEWAY_RESPONSE_HEADERS. */
  readonly headers?: Readonly<Record<string, string>>;
}

/** Headers of every answer API Gateway gives itself, like every answer of a handler. */
export const GATEWAY_RESPONSE_HEADERS: Readonly<Record<string, string>> = {
  // The body is JSON whatever the request's Accept header asked for.
  'Content-Type': 'application/json',
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
  'Strict-Transport-Security': 'max-age=31536000; includeSubDomains',
};

export const GATEWAY_ERRORS: readonly GatewayError[] = [
  {
    type: 'UNAUTHORIZED',
    statusCode: '401',
    error: 'UNAUTHORIZED',
    message:
      'The credential is missing, invalid, expired or revoked. Send one Authorization: Bearer <token> header, or the session cookie.',
    // The bearer-token challenge. A static header cannot tell a missing token from a refused one
    // (the authorizer's 'Unauthorized' carries no context), so no error attribute, which is optional.
    headers: { 'WWW-Authenticate': 'Bearer' },
  },
  {
    type: 'ACCESS_DENIED',
    statusCode: '403',
    error: 'FORBIDDEN',
    // The authorizer denies only cookie requests that fail the CSRF rule, and says which rule.
    message: `$context.authorizer.${CSRF_REFUSAL_CONTEXT_KEY}`,
  },
  // API Gateway answers an unknown path or method with a 403 "Missing Authentication Token".
  { type: 'MISSING_AUTHENTICATION_TOKEN', statusCode: '404', error: 'NOT_FOUND', message: 'No such route.' },
  { type: 'RESOURCE_NOT_FOUND', statusCode: '404', error: 'NOT_FOUND', message: 'No such route.' },
  {
    type: 'REQUEST_TOO_LARGE',
    statusCode: '413',
    error: 'PAYLOAD_TOO_LARGE',
    message: 'The request body is too large.',
  },
  // The stage's throttle, and a team over its evaluation rate (the evaluation plan): both buckets
  // refill every second.
  {
    type: 'THROTTLED',
    statusCode: '429',
    error: 'RATE_LIMITED',
    message: 'Too many requests; retry after the seconds in Retry-After.',
    headers: { 'Retry-After': '1' },
  },
  // An evaluation method requires an API key on the plan, which the authorizer names: the team's
  // own, or the stack's shared one for a team without one yet. Only a team key that is not on the
  // plan (removed by hand, or a replaced stack before its backfill reached it) gets this.
  {
    type: 'INVALID_API_KEY',
    statusCode: '403',
    error: 'FORBIDDEN',
    message:
      "Your team's evaluation key is not on this API's usage plan. Every deploy puts it back: ask the operator to deploy again.",
  },
  {
    type: 'QUOTA_EXCEEDED',
    statusCode: '429',
    error: 'RATE_LIMITED',
    message: 'Too many requests; retry later.',
  },
  {
    type: 'BAD_REQUEST_BODY',
    statusCode: '400',
    error: 'VALIDATION_ERROR',
    message: 'The request is invalid.',
  },
  {
    type: 'BAD_REQUEST_PARAMETERS',
    statusCode: '400',
    error: 'VALIDATION_ERROR',
    message: 'The request is invalid.',
  },
  // Whatever else API Gateway rejects keeps its own 4XX status (e.g. 415 Unsupported Media Type).
  { type: 'DEFAULT_4XX', error: 'VALIDATION_ERROR', message: 'The request was rejected.' },
  // Authorizer failures, integration failures and timeouts keep their 5XX status.
  { type: 'DEFAULT_5XX', error: 'INTERNAL_ERROR', message: 'Internal server error.' },
];

/** The response template: the body, with any `$context.authorizer.*` left for API Gateway to fill in. */
export function gatewayErrorBody(gatewayError: GatewayError): string {
  return JSON.stringify({ error: gatewayError.error, message: gatewayError.message });
}

/**
 * The body as API Gateway sends it: each `$context.authorizer.<key>` replaced, as is, by the
 * authorizer's context value (empty when there is none). The local gateway and tests use it.
 */
export function renderGatewayErrorBody(
  gatewayError: GatewayError,
  authorizerContext: Readonly<Record<string, string>> = {},
): string {
  return gatewayErrorBody(gatewayError).replace(
    /\$context\.authorizer\.([A-Za-z0-9_]+)/g,
    (_, key: string) => (Object.hasOwn(authorizerContext, key) ? String(authorizerContext[key]) : ''),
  );
}

/** Every header one gateway response sends. */
export function gatewayResponseHeaders(gatewayError: GatewayError | undefined): Record<string, string> {
  return { ...GATEWAY_RESPONSE_HEADERS, ...gatewayError?.headers };
}

/** The body of the web ACL's 429 for a caller over its rate (lib/rate-limits.ts; the local gateway too). */
export const RATE_LIMITED_BODY = {
  error: 'RATE_LIMITED',
  message: 'Too many requests from this credential or address; retry after the seconds in Retry-After.',
};
