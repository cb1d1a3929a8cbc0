/*
 * Evaluations (serving-configuration and OFREP) are counted per team, apart from the management
 * API's per-credential rate: a pipeline that reads its configuration on every request is not
 * throttled at the management rate, and the team's ceiling still holds (local/gateway/rate-limit.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS, evaluationRouteMatcher } from '../../../lambdas/limits.ts';
import { evaluationPaths } from '../../../lambdas/operations/declaration.ts';
import { OPERATIONS } from '../../../lambdas/operations/index.ts';
import { localRoutes } from '../../../local/functions.ts';
import { LocalRateLimits } from '../../../local/gateway/rate-limit.ts';
import { type Invoke, type LocalGateway, startLocalGateway } from '../../../local/gateway/server.ts';

/** Tokens `<team><n>`: the authorizer names the team by the token's first letter. */
const allowWithTeam: Invoke = async (entry, event) => {
  if (entry !== 'authorize') return { statusCode: 200, body: '{}' };
  const { methodArn, headers } = event as { methodArn: string; headers: Record<string, string> };
  const token = (headers.authorization ?? headers.Authorization ?? '').replace(/^Bearer /, '');
  return {
    principalId: token,
    context: { teamId: `team-${token.slice(0, 1)}` },
    policyDocument: {
      Version: '2012-10-17',
      Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: methodArn }],
    },
  };
};

let gateway: LocalGateway;

beforeAll(async () => {
  gateway = await startLocalGateway({
    port: 0,
    routes: localRoutes(),
    authorizerEntry: 'authorize',
    invoke: allowWithTeam,
    quiet: true,
    rateLimits: new LocalRateLimits(
      {
        ...DEFAULT_LIMITS,
        requestsPerSecondPerCredential: 0.001,
        burstPerCredential: 3,
        servingRequestsPerSecondPerTeam: 0.001,
        servingBurstPerTeam: 60,
      },
      evaluationPaths(OPERATIONS),
    ),
  });
});
afterAll(async () => {
  await gateway.stop();
});

const call = (token: string, method: string, path: string) =>
  fetch(`${gateway.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(method === 'POST' ? { body: '{"context":{}}' } : {}),
  });

describe('evaluations counted apart, per team', () => {
  it('names exactly the serving and OFREP operations as evaluations', () => {
    const isEvaluation = evaluationRouteMatcher(evaluationPaths(OPERATIONS));
    const evaluations = OPERATIONS.filter((operation) => isEvaluation(operation.path)).map((o) => o.name);
    expect(evaluations.sort()).toEqual(['evaluate-flag', 'evaluate-flags', 'get-serving-configuration']);
  });

  it('counts a path that only ends like an evaluation against the credential, as the route it is', async () => {
    // An execution whose id is "serving-configuration", and OFREP-looking paths under other routes.
    const lookalikes = [
      '/pipelines/p1/executions/serving-configuration',
      '/pipelines/p1/signals/serving-configuration',
      '/pipelines/ofrep/v1/evaluate/flags',
    ];
    const statuses: number[] = [];
    for (const path of lookalikes) statuses.push((await call('c1', 'GET', path)).status);
    const next = await call('c1', 'GET', '/pipelines/p1');

    // The credential's burst of 3 is spent on them: the next request is refused.
    expect(statuses.filter((status) => status === 429)).toHaveLength(0);
    expect(next.status).toBe(429);
  });

  it('lets a credential past its management rate evaluate, and refuses the team past its ceiling whatever the credential', async () => {
    const statuses = async (token: string, method: string, path: string, count: number) => {
      const seen: number[] = [];
      for (let i = 0; i < count; i++) seen.push((await call(token, method, path)).status);
      return seen;
    };
    const management = await statuses('a1', 'GET', '/pipelines/p1', 4);
    const evaluations = [
      ...(await statuses('a1', 'GET', '/pipelines/p1/serving-configuration', 20)),
      ...(await statuses('a1', 'POST', '/ofrep/v1/evaluate/flags/p1', 20)),
      ...(await statuses('a2', 'POST', '/ofrep/v1/evaluate/flags', 20)),
    ];
    const refused = await call('a2', 'POST', '/ofrep/v1/evaluate/flags/p1');
    const otherTeam = await call('b1', 'POST', '/ofrep/v1/evaluate/flags/p1');

    expect(management).toEqual([200, 200, 200, 429]);
    expect(evaluations).toEqual(Array(60).fill(200));
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(otherTeam.status).toBe(200);
  });
});

describe('the default limits, for a pipeline evaluating on each of its 500 requests a second', () => {
  it('throttles none of 10 seconds of evaluations, where the management rate would refuse most', () => {
    const limits = new LocalRateLimits(DEFAULT_LIMITS, evaluationPaths(OPERATIONS));
    const request = (path: string) => ({
      path,
      sourceIp: '127.0.0.1',
      headerValues: (name: string) => (name === 'authorization' ? ['Bearer busy-pipeline'] : []),
    });
    const evaluation = '/ofrep/v1/evaluate/flags/p1';
    let refusedEvaluations = 0;
    let refusedManagement = 0;
    for (let i = 0; i < 5_000; i++) {
      const now = 1_000_000 + i * 2;
      if (limits.check(request(evaluation), now) || limits.checkEvaluation(evaluation, 'team-a', now))
        refusedEvaluations++;
      if (limits.check(request('/pipelines/p1'), now)) refusedManagement++;
    }

    expect(refusedEvaluations).toBe(0);
    expect(refusedManagement).toBeGreaterThan(2_500);
  });
});
