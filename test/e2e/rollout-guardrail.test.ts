/**
 * The guardrail on the local stack: a rollout whose candidate fails more is rolled back by
 * "system" on the sweeper's pass, with the figures in endReason (the stack's sweeper runs every
 * minute by default; here every second, so the test waits seconds, not a minute).
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GUARDRAIL_JUDGE, RUN_SWEEPER } from '../../lambdas/functions.ts';
import { DEMO_SLOTS } from '../../local/seed.ts';
import { type LocalStack, startLocalStack } from '../../local/stack.ts';
import { waitFor } from '../support/wait.ts';

let stack: LocalStack;

beforeAll(async () => {
  const stateDir = await mkdtemp(path.join(tmpdir(), 'pipeline-synthesis-guardrail-'));
  stack = await startLocalStack({
    port: 0,
    quiet: true,
    stateDir,
    scheduleEveryMs: { [RUN_SWEEPER.entry]: 1_000 },
  });
  // The per-batch judge is down: only the sweeper can end the rollout here (it is the backstop).
  const judge = stack.functions.get(GUARDRAIL_JUDGE.entry);
  if (judge) judge.invoke = async () => Promise.reject(new Error('the guardrail judge is down'));
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

async function api(method: string, route: string, body?: unknown) {
  const response = await fetch(`${stack.apiUrl}${route}`, {
    method,
    headers: { authorization: `Bearer ${stack.teams[0]?.apiToken}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  // biome-ignore lint/suspicious/noExplicitAny: response bodies are asserted field by field
  const answer: any = await response.json().catch(() => null);
  return { status: response.status, body: answer };
}

describe('the guardrail on the local stack', { timeout: 120_000 }, () => {
  it('rolls a worse candidate back by "system" on the sweeper pass, giving the failure rates', async () => {
    const pipeline = (await api('POST', '/pipelines', { name: 'guarded', slots: DEMO_SLOTS })).body;
    await api('POST', `/pipelines/${pipeline.id}/signals`, {
      signals: Array.from({ length: 4 }, (_, i) => ({
        kind: 'timeout',
        severity: 'critical',
        message: `Retrieval timed out (${i})`,
        slotId: 'retrieve',
      })),
    });
    const started = (await api('POST', `/pipelines/${pipeline.id}/synthesize`, {})).body;
    await waitFor(
      async () => (await api('GET', `/synthesis-runs/${started.id}`)).body?.status === 'generated',
      'the run to be generated',
      30_000,
    );
    const run = (await api('GET', `/synthesis-runs/${started.id}`)).body;
    const approved = await api('POST', `/synthesis-runs/${run.id}/approve`, {
      rollout: { percent: 50, minExecutions: 30 },
    });
    expect(approved.status).toBe(200);

    const executions = [
      ...Array.from({ length: 40 }, () => ({
        configurationId: pipeline.activeConfigurationId,
        status: 'succeeded',
        durationMs: 100,
      })),
      ...Array.from({ length: 40 }, (_, i) => ({
        configurationId: run.proposedConfigurationId,
        status: i < 20 ? 'failed' : 'succeeded',
        durationMs: 100,
      })),
    ];
    expect((await api('POST', `/pipelines/${pipeline.id}/executions`, { executions })).status).toBe(201);

    await waitFor(
      async () => (await api('GET', `/pipelines/${pipeline.id}/rollout`)).body?.status === 'rolled_back',
      'the guardrail to roll the rollout back',
      30_000,
      200,
    );
    const rollout = (await api('GET', `/pipelines/${pipeline.id}/rollout`)).body;
    expect(rollout).toMatchObject({ endedBy: 'system' });
    expect(rollout.endReason).toContain('50.00 % (20 of 40) on the candidate');
    expect(rollout.endReason).toContain('0.00 % (0 of 40) on the base');
    expect((await api('GET', `/pipelines/${pipeline.id}`)).body).toMatchObject({
      activeConfigurationId: pipeline.activeConfigurationId,
      rollout: null,
    });
  });
});
