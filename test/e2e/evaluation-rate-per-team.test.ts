/*
 * The evaluation rate is the team's, not each credential's (issue 47, finding 5): on the local stack
 * with its real authorizer, two API tokens of one team evaluating (OFREP and serving-configuration)
 * share the team's burst, so a second token adds nothing to it; another team's bucket is its own.
 * Counts of 429s from a burst, no timing: the refill is set so slow that none happens meanwhile.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../lambdas/limits.ts';
import { type LocalStack, startLocalStack } from '../../local/stack.ts';

/** The team's evaluations before a 429: each token alone would have this many of its own if per credential. */
const TEAM_BURST = 12;

let stack: LocalStack;

beforeAll(async () => {
  stack = await startLocalStack({
    port: 0,
    quiet: true,
    stateDir: await mkdtemp(path.join(tmpdir(), 'pipeline-synthesis-evaluation-rate-')),
    log: () => undefined,
    limits: {
      ...DEFAULT_LIMITS,
      requestsPerSecondPerCredential: 1_000,
      burstPerCredential: 1_000,
      servingRequestsPerSecondPerTeam: 0.001,
      servingBurstPerTeam: TEAM_BURST,
    },
  });
}, 180_000);
afterAll(async () => {
  await stack?.stop();
}, 60_000);

const call = (token: string, method: string, route: string, body?: unknown) =>
  fetch(`${stack.apiUrl}${route}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

describe('the evaluation rate on the local stack', () => {
  it("is one bucket for all of a team's tokens, and another team keeps its own", async () => {
    const [team, other] = stack.teams;
    if (!team || !other) throw new Error('two seeded teams expected');
    // A second API token of the same team, made with the admin's session.
    const login = await call('', 'POST', '/auth/login', {
      email: team.email,
      password: team.password,
      delivery: 'body',
    });
    const { accessToken } = (await login.json()) as { accessToken: string };
    const minted = await call(accessToken, 'POST', '/api-tokens', { name: 'second', teamId: team.teamId });
    expect(minted.status).toBe(201);
    const { token: second } = (await minted.json()) as { token: string };
    const pipelineId = team.pipelineIds[0];

    // Each token alone sends as many evaluations as the team's burst: together, twice as many.
    const statuses: number[] = [];
    for (let index = 0; index < TEAM_BURST; index++) {
      for (const token of [team.apiToken, second]) {
        const response =
          index % 2 === 0
            ? await call(token, 'POST', '/ofrep/v1/evaluate/flags', {
                context: { targetingKey: `c${index}` },
              })
            : await call(token, 'GET', `/pipelines/${pipelineId}/serving-configuration`);
        await response.arrayBuffer();
        statuses.push(response.status);
      }
    }
    const otherTeam = await call(other.apiToken, 'POST', '/ofrep/v1/evaluate/flags', {
      context: { targetingKey: 'c' },
    });
    const management = await call(second, 'GET', `/pipelines/${pipelineId}`);

    expect(statuses.filter((status) => status === 429)).toHaveLength(TEAM_BURST);
    expect(statuses.filter((status) => status !== 429).length).toBe(TEAM_BURST);
    expect(otherTeam.status).toBe(200);
    // The management API's per-credential rate is apart: the token may still read its pipeline.
    expect(management.status).toBe(200);
  });
});
