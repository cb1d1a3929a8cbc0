/*
 * The API Gateway REQUEST authorizer: authenticates the API token, access token or session
 * cookie, applies the CSRF rule to cookie requests, passes the caller to the handler, and on the
 * evaluation routes names the caller's team's usage key (the evaluation rate per team).
 */
import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { type Authenticate, makeAuthenticate } from '../auth/authenticate.ts';
import { CSRF_REFUSAL_CONTEXT_KEY, csrfViolation } from '../auth/csrf.ts';
import { makeUsageKeyOfRequest, type UsageKeyOfRequest } from '../auth/usage-keys.ts';
import { UnauthorizedError } from '../core/errors.ts';
import type { Principal } from '../core/principal.ts';
import { headerOf, presentedCredential } from '../http/session-cookies.ts';
import { logger } from '../observability/logger.ts';
import { auditLog } from '../wiring/auth-services.ts';
import { systemClock } from '../wiring/clock.ts';
import { evaluationFallbackKeyFromEnv, evaluationRoutesFromEnv } from '../wiring/config.ts';
import { authRepositoryFromEnv, teamUsageKeyStoreFromEnv } from '../wiring/repositories.ts';
import { sessionSigningKeyFromEnv } from '../wiring/session-secret.ts';

/**
 * An Allow of exactly `methodArn`, with the caller as context for the handler and, on an
 * evaluation route, the team's usage key as the key the evaluation plan counts the request against.
 */
function allowance(
  principal: Principal,
  methodArn: string,
  usageKey: string | undefined,
): APIGatewayAuthorizerResult {
  return {
    principalId: principal.principalId,
    ...(usageKey === undefined ? {} : { usageIdentifierKey: usageKey }),
    policyDocument: {
      Version: '2012-10-17',
      Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: methodArn }],
    },
    context: {
      userId: principal.userId,
      teamId: principal.teamId,
      role: principal.role,
      method: principal.method,
      ...(principal.tokenId ? { tokenId: principal.tokenId } : {}),
      ...(principal.sessionId ? { sessionId: principal.sessionId } : {}),
    },
  };
}

/**
 * A Deny, with the reason the gateway's 403 body shows (`$context.authorizer.refusal` in
 * lib/gateway-errors.ts). API Gateway inserts the value into its JSON template as is, so quotes,
 * backslashes and control characters never reach it.
 */
function denial(principal: Principal, methodArn: string, reason: string): APIGatewayAuthorizerResult {
  return {
    principalId: principal.principalId,
    policyDocument: {
      Version: '2012-10-17',
      Statement: [{ Action: 'execute-api:Invoke', Effect: 'Deny', Resource: methodArn }],
    },
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it removes
    context: { [CSRF_REFUSAL_CONTEXT_KEY]: reason.replace(/["\\\u0000-\u001f\u007f]/g, "'") },
  };
}

/**
 * The Lambda REQUEST authorizer. It accepts an API token or a session access token as
 * `Authorization: Bearer`, or the session cookie; it allows exactly the method ARN it was asked
 * about (API Gateway's result cache is off, so a policy is never reused for another route), and
 * passes the caller to the handler as context. A cookie-authenticated request that fails the CSRF
 * rule gets a Deny (403 FORBIDDEN from the gateway, naming the rule); several Authorization
 * headers are a 401. Team and role checks happen in the handlers, which know the resource. On the
 * evaluation routes it names the team's usage key, or the stack's shared key for a team without one
 * yet (before the deploy's backfill reaches it), so an evaluation is never refused for want of a key.
 */
export function makeAuthorizer(authenticate: Authenticate, usageKeyOf: UsageKeyOfRequest) {
  return async (event: APIGatewayRequestAuthorizerEvent): Promise<APIGatewayAuthorizerResult> => {
    try {
      const credential = presentedCredential(event);
      const principal = await authenticate(credential);
      if (credential?.via === 'cookie') {
        const violation = csrfViolation(event.httpMethod, (name) => headerOf(event, name));
        if (violation) {
          // The rule's name: its message quotes the Authorization syntax, which log scanners flag.
          logger.info('request denied', { csrfRule: violation.rule, sessionId: principal.sessionId });
          return denial(principal, event.methodArn, violation.message);
        }
      }
      const usageKey = await usageKeyOf(event.resource, principal.teamId);
      return allowance(principal, event.methodArn, usageKey);
    } catch (error) {
      if (error instanceof UnauthorizedError) {
        logger.info('credential refused', { reason: error.message });
        // API Gateway answers 401 (our UNAUTHORIZED gateway response) for exactly this message.
        throw new Error('Unauthorized');
      }
      logger.error('authorizer failed', { error: error as Error });
      throw error;
    }
  };
}

export const handler = makeAuthorizer(
  makeAuthenticate({
    auth: authRepositoryFromEnv(),
    clock: systemClock,
    signingKey: sessionSigningKeyFromEnv(),
    audit: auditLog,
  }),
  makeUsageKeyOfRequest({
    store: teamUsageKeyStoreFromEnv(),
    evaluationRoutes: evaluationRoutesFromEnv(),
    fallbackKey: evaluationFallbackKeyFromEnv(),
    clock: systemClock,
  }),
);
