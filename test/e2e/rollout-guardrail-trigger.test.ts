/**
 * The per-batch guardrail on the local stack: recording executions of a rollout whose candidate
 * fails more gets it rolled back by "system" through the guardrail queue and its judge, with the
 * figures in endReason. The sweeper is put an hour apart, so it cannot be what ended it (its
 * schedule's first pass comes one period after the start).
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RUN_SWEEPER } from '../../lambdas/functions.ts';
import { type LocalStack, startLocalStack } from '../../local/stack.ts';
import { type Api, apiOf, pipelineInRollout } from '../support/rollout-traffic.ts';
import { waitFor } from '../support/wait.ts';

let stack: LocalStack;
let api: Api;

beforeAll(async () => {
  const stateDir = await mkdtemp(path.join(tmpdir(), 'pipeline-synthesis-guardrail-trigger-'));
  stack = await startLocalStack({
    port: 0,
    quiet: true,
    stateDir,
    scheduleEveryMs: { [RUN_SWEEPER.entry]: 3_600_000 },
  });
  api = apiOf(stack);
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

const arm = (configurationId: string, n: number, failed: number) =>
  Array.from({ length: n }, (_, i) => ({
    configurationId,
    status: i < failed ? 'failed' : 'succeeded',
    durationMs: 100,
  }));

describe('the guardrail after executions are recorded, on the local stack', { timeout: 120_000 }, () => {
  it('rolls a worse candidate back by "system" without the sweeper, giving the failure rates', async () => {
    const { pipelineId, baseId, candidateId } = await pipelineInRollout(api, 'guarded by the trigger', {
      percent: 50,
      minExecutions: 30,
      autoRollback: true,
    });

    // Two batches, one an arm: the second crosses the minimum.
    for (const executions of [arm(baseId, 40, 0), arm(candidateId, 40, 20)]) {
      expect((await api('POST', `/pipelines/${pipelineId}/executions`, { executions })).status).toBe(201);
    }

    await waitFor(
      async () => (await api('GET', `/pipelines/${pipelineId}/rollout`)).body?.status === 'rolled_back',
      'the guardrail to roll the rollout back',
      60_000,
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

  it('promotes a candidate shown within its threshold when autoPromote is on', async () => {
    // Promotion needs evidence that the candidate is no worse than the tolerated regression: with a
    // wide threshold (30 points) 100 executions an arm at the same failure rate show it.
    const { pipelineId, baseId, candidateId } = await pipelineInRollout(api, 'promoted by the trigger', {
      percent: 50,
      minExecutions: 30,
      autoPromote: true,
      guardrails: [{ metric: 'failure_rate', threshold: 0.3 }],
    });

    // One batch an arm (at most 100 records a batch).
    for (const executions of [arm(baseId, 100, 10), arm(candidateId, 100, 10)]) {
      expect((await api('POST', `/pipelines/${pipelineId}/executions`, { executions })).status).toBe(201);
    }

    await waitFor(
      async () => (await api('GET', `/pipelines/${pipelineId}/rollout`)).body?.status === 'promoted',
      'the guardrail to promote the rollout',
      60_000,
      200,
    );
    const rollout = (await api('GET', `/pipelines/${pipelineId}/rollout`)).body;
    expect(rollout).toMatchObject({ endedBy: 'system' });
    expect(rollout.endReason).toContain('10.00 % (10 of 100)');
    expect((await api('GET', `/pipelines/${pipelineId}`)).body).toMatchObject({
      activeConfigurationId: candidateId,
      rollout: null,
    });
  });
});
