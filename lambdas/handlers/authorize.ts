/*
 * The API Gateway REQUEST authorizer: authenticates the API token, access token or session
 * cookie, applies the CSRF rule to cookie requests, and passes the caller to the handler.
 */
import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { type Authenticate, makeAuthenticate } from '../auth/authenticate.ts';
import { csrfRefusal } from '../auth/csrf.ts';
import { UnauthorizedError } from '../core/errors.ts';
import type { Principal } from '../core/principal.ts';
import { headerOf, presentedCredential } from '../http/session-cookies.ts';
import { logger } from '../observability/logger.ts';
import { auditLog } from '../wiring/auth-services.ts';
import { systemClock } from '../wiring/clock.ts';
import { authRepositoryFromEnv } from '../wiring/repositories.ts';
import { sessionSigningKeyFromEnv } from '../wiring/session-secret.ts';

function policy(
  principal: Principal,
  effect: 'Allow' | 'Deny',
  methodArn: string,
): APIGatewayAuthorizerResult {
  return {
    principalId: principal.principalId,
    policyDocument: {
      Version: '2012-10-17',
      Statement: [{ Action: 'execute-api:Invoke', Effect: effect, Resource: methodArn }],
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
 * The Lambda REQUEST authorizer. It accepts an API token or a session access token as
 * `Authorization: Bearer`, or the session cookie; it allows exactly the method ARN it was asked
 * about (API Gateway's result cache is off, so a policy is never reused for another route), and
 * passes the caller to the handler as context. A cookie-authenticated request that fails the CSRF
 * rule gets a Deny (403 FORBIDDEN from the gateway). Team and role checks happen in the handlers,
 * which know the resource.
 */
export function makeAuthorizer(authenticate: Authenticate) {
  return async (event: APIGatewayRequestAuthorizerEvent): Promise<APIGatewayAuthorizerResult> => {
    try {
      const credential = presentedCredential(event);
      const principal = await authenticate(credential);
      if (credential?.via === 'cookie') {
        const refusal = csrfRefusal(event.httpMethod, (name) => headerOf(event, name));
        if (refusal) {
          logger.info('request denied', { reason: refusal, sessionId: principal.sessionId });
          return policy(principal, 'Deny', event.methodArn);
        }
      }
      return policy(principal, 'Allow', event.methodArn);
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
);
