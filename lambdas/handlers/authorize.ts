import type {
  APIGatewayAuthorizerResult,
  APIGatewayRequestAuthorizerEvent,
} from 'aws-lambda';
import { makeAuthenticate } from '../auth/authenticate.ts';
import { UnauthorizedError } from '../core/errors.ts';
import { systemClock } from '../platform/clock.ts';
import { logger } from '../platform/logger.ts';
import { authRepositoryFromEnv } from '../platform/repositories.ts';

const authenticate = makeAuthenticate({ auth: authRepositoryFromEnv(), clock: systemClock });

function headerValue(event: APIGatewayRequestAuthorizerEvent, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(event.headers ?? {})) {
    if (key.toLowerCase() === wanted && value) return value;
  }
  return undefined;
}

/**
 * The Lambda REQUEST authorizer. It allows exactly the method ARN it was asked about (API
 * Gateway's result cache is off, so a policy is never reused for another route), and passes the
 * caller to the handler as context. Team and role checks happen in the handlers, which know the
 * resource: that is where 403 comes from.
 */
export const handler = async (event: APIGatewayRequestAuthorizerEvent): Promise<APIGatewayAuthorizerResult> => {
  try {
    const principal = await authenticate(headerValue(event, 'authorization'));
    return {
      principalId: principal.principalId,
      policyDocument: {
        Version: '2012-10-17',
        Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: event.methodArn }],
      },
      context: {
        userId: principal.userId,
        teamId: principal.teamId,
        role: principal.role,
        method: principal.method,
        ...(principal.tokenId ? { tokenId: principal.tokenId } : {}),
      },
    };
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
