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
import { type LocalStack, startLocalStack } from '../../local/stack.ts';
import { type Api, apiOf, pipelineInRollout } from '../support/rollout-traffic.ts';
import { waitFor } from '../support/wait.ts';

let stack: LocalStack;
let api: Api;

beforeAll(async () => {
  const stateDir = await mkdtemp(path.join(tmpdir(), 'pipeline-synthesis-guardrail-'));
  stack = await startLocalStack({
    port: 0,
    quiet: true,
    stateDir,
    scheduleEveryMs: { [RUN_SWEEPER.entry]: 1_000 },
  });
  api = apiOf(stack);
  // The per-batch judge is down: only the sweeper can end the rollout here (it is the backstop).
  const judge = stack.functions.get(GUARDRAIL_JUDGE.entry);
  if (judge) judge.invoke = async () => Promise.reject(new Error('the guardrail judge is down'));
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

describe('the guardrail on the local stack', { timeout: 120_000 }, () => {
  it('rolls a worse candidate back by "system" on the sweeper pass, giving the failure rates', async () => {
    const { pipelineId, baseId, candidateId } = await pipelineInRollout(api, 'guarded', {
      percent: 50,
      minExecutions: 30,
    });

    const executions = [
      ...Array.from({ length: 40 }, () => ({
        configurationId: baseId,
        status: 'succeeded',
        durationMs: 100,
      })),
      ...Array.from({ length: 40 }, (_, i) => ({
        configurationId: candidateId,
        status: i < 20 ? 'failed' : 'succeeded',
        durationMs: 100,
      })),
    ];
    expect((await api('POST', `/pipelines/${pipelineId}/executions`, { executions })).status).toBe(201);

    await waitFor(
      async () => (await api('GET', `/pipelines/${pipelineId}/rollout`)).body?.status === 'rolled_back',
      'the guardrail to roll the rollout back',
      30_000,
      200,
    );
    const rollout = (await api('GET', `/pipelines/${pipelineId}/rollout`)).body;
    expect(rollout).toMatchObject({ endedBy: 'system' });
    expect(rollout.endReason).toContain('50.00 % (20 of 40) on the candidate');
    expect(rollout.endReason).toContain('0.00 % (0 of 40) on the base');
    expect((await api('GET', `/pipelines/${pipelineId}`)).body).toMatchObject({
      activeConfigurationId: baseId,
      rollout: null,
    });
  });
});
