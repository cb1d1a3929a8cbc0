import type { APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateApiToken, hashApiToken, tokenHint } from '../../../lambdas/auth/api-token.ts';
import { makeAuthenticate } from '../../../lambdas/auth/authenticate.ts';
import { makeStartSession } from '../../../lambdas/auth/sessions.ts';
import {
  at,
  FakeAuthRepository,
  FakeClock,
  RecordingAudit,
  seedMember,
  sequentialIds,
  signingKey,
} from './fakes.ts';

// The CSRF rule as the authorizer applies it: to requests that carry the session cookie, never to
// a credential in the Authorization header, which a page of another origin cannot make a browser send.

const METHOD_ARN = 'arn:aws:execute-api:us-east-1:123456789012:api/prod/POST/pipelines';
const CROSS_SITE_FORM = {
  'Content-Type': 'application/x-www-form-urlencoded',
  Origin: 'https://evil.example',
  'Sec-Fetch-Site': 'cross-site',
};

let authorize: (
  event: APIGatewayRequestAuthorizerEvent,
) => Promise<{ policyDocument: { Statement: unknown[] } }>;
let apiToken: string;
let accessToken: string;

beforeAll(async () => {
  // The module builds its production handler on import; these only have to name a table.
  process.env.AUTH_TABLE ??= 'auth-unit';
  process.env.EVALUATION_ROUTES ??= '[]';
  process.env.EVALUATION_FALLBACK_KEY ??= 'shared-evaluations-key-of-the-test';
  process.env.AWS_REGION ??= 'us-east-1';
  const { makeAuthorizer } = await import('../../../lambdas/handlers/authorize.ts');
  const repo = new FakeAuthRepository();
  const clock = new FakeClock();
  const audit = new RecordingAudit();
  const user = await seedMember(repo);
  apiToken = generateApiToken();
  await repo.createApiToken({
    tokenId: 'token-1',
    tokenHash: hashApiToken(apiToken),
    userId: user.userId,
    teamId: 'team-a',
    name: 'ci',
    hint: tokenHint(apiToken),
    createdAt: at(0),
    expiresAt: null,
    revokedAt: null,
  });
  ({ accessToken } = await makeStartSession({ auth: repo, clock, ids: sequentialIds(), signingKey, audit })(
    user,
    'password',
  ));
  authorize = makeAuthorizer(
    makeAuthenticate({ auth: repo, clock, signingKey, audit }),
    async () => undefined,
  );
});

const event = (headers: Record<string, string>): APIGatewayRequestAuthorizerEvent => ({
  type: 'REQUEST',
  methodArn: METHOD_ARN,
  resource: '/pipelines',
  path: '/pipelines',
  httpMethod: 'POST',
  headers: { Host: 'api.example.test', ...headers },
  multiValueHeaders: {},
  pathParameters: null,
  queryStringParameters: null,
  multiValueQueryStringParameters: null,
  stageVariables: null,
  requestContext: {} as APIGatewayRequestAuthorizerEvent['requestContext'],
});
const effectOf = async (headers: Record<string, string>) =>
  ((await authorize(event(headers))).policyDocument.Statement[0] as { Effect: string }).Effect;

describe('the authorizer’s CSRF rule', () => {
  it('never applies to Authorization: Bearer, an API token or a session token', async () => {
    expect(await effectOf({ Authorization: `Bearer ${apiToken}`, ...CROSS_SITE_FORM })).toBe('Allow');
    expect(await effectOf({ Authorization: `Bearer ${accessToken}`, ...CROSS_SITE_FORM })).toBe('Allow');
  });

  it('denies a cookie-authenticated request that fails it, and allows one that passes', async () => {
    expect(await effectOf({ Cookie: `ps_session=${accessToken}`, ...CROSS_SITE_FORM })).toBe('Deny');
    expect(await effectOf({ Cookie: `ps_session=${accessToken}`, 'Content-Type': 'application/json' })).toBe(
      'Allow',
    );
  });
});
