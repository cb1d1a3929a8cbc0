import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateApiToken, hashApiToken } from '../../../lambdas/auth/api-token.ts';
import { apiTokenKey } from '../../../lambdas/store/auth/keys.ts';
import { makeTeamUsageKeyStore } from '../../../lambdas/store/auth/usage-keys.ts';
import type { TableNames } from '../../../local/dynamodb.ts';
import { type Caller, createCaller, SHARED_EVALUATION_KEY, setUpApiEnvironment } from './harness.ts';

type Authorizer = (event: APIGatewayRequestAuthorizerEvent) => Promise<APIGatewayAuthorizerResult>;
let authorize: Authorizer;
let db: DynamoDBDocumentClient;
let names: TableNames;
let caller: Caller;

const METHOD_ARN = 'arn:aws:execute-api:us-east-1:123456789012:api/prod/GET/synthesis-runs/abc';

function requestEvent(
  headers: Record<string, string>,
  resource = '/synthesis-runs/{id}',
): APIGatewayRequestAuthorizerEvent {
  return {
    type: 'REQUEST',
    methodArn: METHOD_ARN,
    resource,
    path: '/synthesis-runs/abc',
    httpMethod: 'GET',
    headers,
    multiValueHeaders: {},
    pathParameters: { id: 'abc' },
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    stageVariables: null,
    requestContext: {} as APIGatewayRequestAuthorizerEvent['requestContext'],
  };
}

beforeAll(async () => {
  ({ db, names } = await setUpApiEnvironment());
  caller = await createCaller(db, names, 'member');
  authorize = (await import('../../../lambdas/handlers/authorize.ts')).handler;
});

describe('the Lambda authorizer', () => {
  it('allows a valid API token for exactly the requested method and passes the caller as context', async () => {
    const result = await authorize(requestEvent({ Authorization: `Bearer ${caller.apiToken}` }));
    expect(result.principalId).toBe(caller.principal.userId);
    expect(result.policyDocument.Statement).toEqual([
      { Action: 'execute-api:Invoke', Effect: 'Allow', Resource: METHOD_ARN },
    ]);
    expect(result.context).toEqual({
      userId: caller.principal.userId,
      teamId: caller.principal.teamId,
      role: 'member',
      method: 'api-token',
      tokenId: caller.principal.tokenId,
    });
  });

  it.each([
    ['no header', {}],
    ['another scheme', { authorization: 'Basic dXNlcjpwYXNz' }],
    ['an empty bearer', { authorization: 'Bearer ' }],
    ['a token with a wrong checksum', { authorization: 'Bearer psa_000000000000000000000000000000AAAAAA' }],
    ['a well-formed token that was never issued', { authorization: `Bearer ${generateApiToken()}` }],
    ['a huge header', { authorization: `Bearer ${'x'.repeat(100_000)}` }],
  ])('refuses %s with Unauthorized (401 at the gateway)', async (_, headers) => {
    await expect(authorize(requestEvent(headers))).rejects.toThrow(/^Unauthorized$/);
  });

  it('refuses a revoked or expired token', async () => {
    const revoked = await createCaller(db, names);
    const expired = await createCaller(db, names);
    const set = (token: string, attribute: string) =>
      db.send(
        new UpdateCommand({
          TableName: names.Auth,
          Key: apiTokenKey(hashApiToken(token)),
          UpdateExpression: `SET ${attribute} = :at`,
          ExpressionAttributeValues: { ':at': '2026-01-01T00:00:00.000Z' },
        }),
      );
    await set(revoked.apiToken, 'revokedAt');
    await set(expired.apiToken, 'expiresAt');
    await expect(authorize(requestEvent({ authorization: `Bearer ${revoked.apiToken}` }))).rejects.toThrow(
      /^Unauthorized$/,
    );
    await expect(authorize(requestEvent({ authorization: `Bearer ${expired.apiToken}` }))).rejects.toThrow(
      /^Unauthorized$/,
    );
  });

  it('stores API tokens only as SHA-256 hashes', async () => {
    const { ScanCommand } = await import('@aws-sdk/lib-dynamodb');
    const { Items = [] } = await db.send(new ScanCommand({ TableName: names.Auth }));
    expect(JSON.stringify(Items)).not.toContain(caller.apiToken);
    expect(Items.some((item) => item.pk === apiTokenKey(hashApiToken(caller.apiToken)).pk)).toBe(true);
  });
});

describe('the usage key of the evaluation plan', () => {
  const SERVING = '/pipelines/{pipelineId}/serving-configuration';
  const OFREP_BULK = '/ofrep/v1/evaluate/flags';

  it('names the caller’s team’s key on the evaluation routes only, each team its own', async () => {
    const other = await createCaller(db, names, 'viewer');
    const keys = makeTeamUsageKeyStore({ db, tableName: names.Auth });
    await keys.keepTeamUsageKey(
      caller.principal.teamId,
      {
        keyId: 'k1',
        value: `usage-${caller.principal.teamId}`,
      },
      'plan-1',
    );
    await keys.keepTeamUsageKey(
      other.principal.teamId,
      {
        keyId: 'k2',
        value: `usage-${other.principal.teamId}`,
      },
      'plan-1',
    );
    const bearer = (who: Caller) => ({ Authorization: `Bearer ${who.apiToken}` });

    const serving = await authorize(requestEvent(bearer(caller), SERVING));
    const bulk = await authorize(requestEvent(bearer(other), OFREP_BULK));
    const management = await authorize(requestEvent(bearer(caller)));
    const servingAgain = await authorize(requestEvent(bearer(caller), SERVING));

    expect(serving.usageIdentifierKey).toBe(`usage-${caller.principal.teamId}`);
    expect(bulk.usageIdentifierKey).toBe(`usage-${other.principal.teamId}`);
    expect(servingAgain.usageIdentifierKey).toBe(`usage-${caller.principal.teamId}`);
    expect(management).not.toHaveProperty('usageIdentifierKey');
    // The key is for API Gateway alone: the handler's context never carries it.
    expect(JSON.stringify(serving.context)).not.toContain('usage-');
  });

  it('names the shared key for a team that has none yet, so its evaluations are counted, never refused', async () => {
    const keyless = await createCaller(db, names, 'member');

    const result = await authorize(requestEvent({ Authorization: `Bearer ${keyless.apiToken}` }, SERVING));

    expect(result.policyDocument.Statement).toEqual([
      { Action: 'execute-api:Invoke', Effect: 'Allow', Resource: METHOD_ARN },
    ]);
    expect(result.usageIdentifierKey).toBe(SHARED_EVALUATION_KEY);
  });
});
