import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateApiToken, hashApiToken, tokenHint } from '../../../lambdas/auth/api-token.ts';
import { makeAuthenticate } from '../../../lambdas/auth/authenticate.ts';
import { CSRF_REFUSAL_CONTEXT_KEY } from '../../../lambdas/auth/csrf.ts';
import { signSessionToken, verifySessionToken } from '../../../lambdas/auth/session-token.ts';
import { makeStartSession } from '../../../lambdas/auth/sessions.ts';
import { UnauthorizedError } from '../../../lambdas/core/errors.ts';
import { presentedCredential } from '../../../lambdas/http/session-cookies.ts';
import {
  FakeAuthRepository,
  FakeClock,
  RecordingAudit,
  SIGNING_KEY,
  seedMember,
  sequentialIds,
  signingKey,
  T0,
} from './fakes.ts';

// One credential, one spelling: a token that decodes to the same bytes under another text, or a
// request with several Authorization headers, would be a second rate-limit bucket (or a header the
// limiter and the authorizer read differently) for the same caller.

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** The token with the unused low bit of its last base64url character set the other way. */
function withLastCharacterLowBitFlipped(token: string): string {
  const last = token.at(-1) ?? '';
  const flipped = BASE64URL[BASE64URL.indexOf(last) ^ 1] ?? '';
  return `${token.slice(0, -1)}${flipped}`;
}

describe('session access tokens', () => {
  const now = new Date(T0);
  const token = signSessionToken(
    { sid: 'session-1', uid: 'user-1', iat: now.getTime() / 1000, exp: now.getTime() / 1000 + 900 },
    SIGNING_KEY,
  );

  it('are accepted as signed', () => {
    expect(verifySessionToken(token, SIGNING_KEY, now)).toMatchObject({ sid: 'session-1' });
  });

  it('are refused when the signature’s last character differs only in bits the decoding ignores', () => {
    const respelled = withLastCharacterLowBitFlipped(token);

    expect(respelled).not.toBe(token);
    expect(Buffer.from(respelled.split('.')[1] ?? '', 'base64url')).toEqual(
      Buffer.from(token.split('.')[1] ?? '', 'base64url'),
    );
    expect(verifySessionToken(respelled, SIGNING_KEY, now)).toBeNull();
  });
});

describe('several Authorization headers', () => {
  const request = (multiValueHeaders: Record<string, string[]>) => ({
    path: '/me',
    headers: Object.fromEntries(
      Object.entries(multiValueHeaders).map(([name, values]) => [name, values.at(-1) ?? '']),
    ),
    multiValueHeaders,
  });

  it('are refused with a 401 that says so, whatever their spelling', () => {
    const repeated: Array<Record<string, string[]>> = [
      { Authorization: ['Bearer a', 'Bearer b'] },
      { Authorization: ['Bearer a', 'Bearer a'] },
      { Authorization: ['Bearer a'], authorization: ['Bearer b'] },
    ];
    for (const headers of repeated) {
      expect(() => presentedCredential(request(headers))).toThrow(
        new UnauthorizedError('Send one Authorization header; this request has several.'),
      );
    }
  });

  it('are told apart from one header by the headers alone when multiValueHeaders is absent', () => {
    expect(() =>
      presentedCredential({ path: '/me', headers: { Authorization: 'Bearer a', authorization: 'Bearer b' } }),
    ).toThrow(UnauthorizedError);
    expect(presentedCredential({ path: '/me', headers: { authorization: 'bearer   a' } })).toEqual({
      secret: 'a',
      via: 'bearer',
    });
  });
});

describe('the authorizer', () => {
  let authorize: (event: APIGatewayRequestAuthorizerEvent) => Promise<APIGatewayAuthorizerResult>;
  let apiToken: string;

  beforeAll(async () => {
    // The module builds its production handler on import; these only have to name a table.
    process.env.AUTH_TABLE ??= 'auth-unit';
    process.env.EVALUATION_ROUTES ??= '[]';
    process.env.EVALUATION_FALLBACK_KEY ??= 'shared-evaluations-key-of-the-test';
    process.env.AWS_REGION ??= 'us-east-1';
    const { makeAuthorizer } = await import('../../../lambdas/handlers/authorize.ts');
    const repo = new FakeAuthRepository();
    const user = await seedMember(repo);
    apiToken = generateApiToken();
    await repo.createApiToken({
      tokenId: 'token-1',
      tokenHash: hashApiToken(apiToken),
      userId: user.userId,
      teamId: 'team-a',
      name: 'ci',
      hint: tokenHint(apiToken),
      createdAt: T0,
      expiresAt: null,
      revokedAt: null,
    });
    authorize = makeAuthorizer(
      makeAuthenticate({ auth: repo, clock: new FakeClock(), signingKey, audit: new RecordingAudit() }),
      async () => undefined,
    );
  });

  const event = (multiValueHeaders: Record<string, string[]>): APIGatewayRequestAuthorizerEvent => ({
    type: 'REQUEST',
    methodArn: 'arn:aws:execute-api:us-east-1:123456789012:api/prod/GET/me',
    resource: '/me',
    path: '/me',
    httpMethod: 'GET',
    // As API Gateway fills them: the last value of each header, and every value.
    headers: Object.fromEntries(
      Object.entries(multiValueHeaders).map(([name, values]) => [name, values.at(-1)]),
    ),
    multiValueHeaders,
    pathParameters: null,
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    stageVariables: null,
    requestContext: {} as APIGatewayRequestAuthorizerEvent['requestContext'],
  });

  it('allows one Authorization header, however Bearer is spelled', async () => {
    const result = await authorize(event({ authorization: [`BEARER  ${apiToken}`] }));

    expect(result.policyDocument.Statement[0]).toMatchObject({ Effect: 'Allow' });
  });

  it('answers 401 to two Authorization headers, even when the last one is valid', async () => {
    await expect(
      authorize(event({ Authorization: ['Bearer psa_someone-elses-or-junk', `Bearer ${apiToken}`] })),
    ).rejects.toThrow(new Error('Unauthorized'));
    await expect(
      authorize(event({ Authorization: [`Bearer ${apiToken}`, `Bearer ${apiToken}`] })),
    ).rejects.toThrow(new Error('Unauthorized'));
  });

  it('denies with the CSRF rule’s words as context, which the gateway’s 403 shows', async () => {
    const repo = new FakeAuthRepository();
    const clock = new FakeClock();
    const audit = new RecordingAudit();
    const user = await seedMember(repo);
    const { makeAuthorizer } = await import('../../../lambdas/handlers/authorize.ts');
    const { accessToken } = await makeStartSession({
      auth: repo,
      clock,
      ids: sequentialIds(),
      signingKey,
      audit,
    })(user, 'password');
    const cookieAuthorize = makeAuthorizer(
      makeAuthenticate({ auth: repo, clock, signingKey, audit }),
      async () => undefined,
    );

    const result = await cookieAuthorize({
      ...event({ Cookie: [`ps_session=${accessToken}`], 'Sec-Fetch-Site': ['cross-site'] }),
      httpMethod: 'POST',
    });

    expect(result.policyDocument.Statement[0]).toMatchObject({ Effect: 'Deny' });
    const reason = String(result.context?.[CSRF_REFUSAL_CONTEXT_KEY]);
    expect(reason).toMatch(/^Refused by the CSRF rule for the session cookie: .*Sec-Fetch-Site: cross-site/);
    expect(JSON.parse(`{"message":"${reason}"}`).message).toBe(reason);
  });
});
