/**
 * The bodies API Gateway itself answers with (no Lambda involved), shaped like every handler
 * error: `{"error": CODE, "message": text}`. Plain data without CDK imports, so the local gateway
 * can give the very same answers. Messages are static text: no `$context` variables, so a body is
 * always valid JSON and never echoes internals. Gateway response templates get no VTL (no `#if`
 * on the status), which is why each response type that needs its own code has its own entry.
 */
export interface GatewayError {
  /** An API Gateway gateway response type (aws-apigateway ResponseType). */
  readonly type: string;
  /** Overrides the status API Gateway would use; absent keeps the type's own status. */
  readonly statusCode?: string;
  readonly error: string;
  readonly message: string;
}

export const GATEWAY_ERRORS: readonly GatewayError[] = [
  {
    type: 'UNAUTHORIZED',
    statusCode: '401',
    error: 'UNAUTHORIZED',
    message: 'The credential is missing, invalid, expired or revoked.',
  },
  {
    type: 'ACCESS_DENIED',
    statusCode: '403',
    error: 'FORBIDDEN',
    message: 'The credential does not allow this request.',
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
  { type: 'THROTTLED', statusCode: '429', error: 'RATE_LIMITED', message: 'Too many requests; retry later.' },
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

export function gatewayErrorBody(gatewayError: GatewayError): string {
  return JSON.stringify({ error: gatewayError.error, message: gatewayError.message });
}

/** The body of the web ACL's 429 for a caller over its rate (lib/rate-limits.ts; the local gateway too). */
export const RATE_LIMITED_BODY = {
  error: 'RATE_LIMITED',
  message: 'Too many requests from this credential or address; retry after the seconds in Retry-After.',
};
