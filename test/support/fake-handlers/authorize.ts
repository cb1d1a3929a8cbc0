import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';

/**
 * A stand-in REQUEST authorizer for gateway tests. The bearer token names the behaviour:
 * `allow`, `deny`, `other-method`, `wildcard`, `crash`, `malformed`, `nested-context`; anything
 * else (or none) is refused with API Gateway's magic 'Unauthorized'.
 */
export const handler = async (
  event: APIGatewayRequestAuthorizerEvent,
): Promise<APIGatewayAuthorizerResult | object> => {
  const header = Object.entries(event.headers ?? {}).find(
    ([name]) => name.toLowerCase() === 'authorization',
  )?.[1];
  const token = header?.replace(/^Bearer /, '');
  const policy = (effect: 'Allow' | 'Deny', resource: string | string[]) => ({
    Version: '2012-10-17',
    Statement: [{ Action: 'execute-api:Invoke', Effect: effect, Resource: resource }],
  });
  switch (token) {
    case 'allow':
      return {
        principalId: 'user-1',
        policyDocument: policy('Allow', event.methodArn),
        context: { teamId: 'team-1', role: 'admin', quota: 3, admin: true },
      };
    case 'deny':
      // An explicit Deny beats the Allow on everything.
      return {
        principalId: 'user-1',
        policyDocument: {
          Version: '2012-10-17',
          Statement: [
            { Action: 'execute-api:*', Effect: 'Allow', Resource: '*' },
            { Action: 'execute-api:Invoke', Effect: 'Deny', Resource: event.methodArn },
          ],
        },
      };
    case 'other-method': {
      const [prefix, stage] = event.methodArn.split('/');
      return { principalId: 'user-1', policyDocument: policy('Allow', `${prefix}/${stage}/DELETE/*`) };
    }
    case 'wildcard': {
      const [prefix] = event.methodArn.split('/');
      return { principalId: 'user-1', policyDocument: policy('Allow', `${prefix}/*/GET/item?/*`) };
    }
    case 'crash':
      throw new Error('connection to /var/secret/db refused');
    case 'malformed':
      return { principalId: 'user-1' };
    case 'nested-context':
      return { principalId: 'user-1', policyDocument: policy('Allow', '*'), context: { team: { id: 't' } } };
    default:
      throw new Error('Unauthorized');
  }
};
