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
import { DEMO_SLOTS } from '../../local/seed.ts';
import { type LocalStack, startLocalStack } from '../../local/stack.ts';
import { waitFor } from '../support/wait.ts';

let stack: LocalStack;

beforeAll(async () => {
  const stateDir = await mkdtemp(path.join(tmpdir(), 'pipeline-synthesis-guardrail-trigger-'));
  stack = await startLocalStack({
    port: 0,
    quiet: true,
    stateDir,
    scheduleEveryMs: { [RUN_SWEEPER.entry]: 3_600_000 },
  });
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

/** A pipeline with a generated run, approved as a rollout with `rollout`'s settings. */
async function pipelineInRollout(name: string, rollout: object) {
  const pipeline = (await api('POST', '/pipelines', { name, slots: DEMO_SLOTS })).body;
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
  const approved = await api('POST', `/synthesis-runs/${run.id}/approve`, { rollout });
  expect(approved.status).toBe(200);
  return { pipeline, run };
}

const arm = (configurationId: string, n: number, failed: number) =>
  Array.from({ length: n }, (_, i) => ({
    configurationId,
    status: i < failed ? 'failed' : 'succeeded',
    durationMs: 100,
  }));

describe('the guardrail after executions are recorded, on the local stack', { timeout: 120_000 }, () => {
  it('rolls a worse candidate back by "system" without the sweeper, giving the failure rates', async () => {
    const { pipeline, run } = await pipelineInRollout('guarded by the trigger', {
      percent: 50,
      minExecutions: 30,
      autoRollback: true,
    });

    // Two batches, one an arm: the second crosses the minimum.
    for (const executions of [
      arm(pipeline.activeConfigurationId, 40, 0),
      arm(run.proposedConfigurationId, 40, 20),
    ]) {
      expect((await api('POST', `/pipelines/${pipeline.id}/executions`, { executions })).status).toBe(201);
    }

    await waitFor(
      async () => (await api('GET', `/pipelines/${pipeline.id}/rollout`)).body?.status === 'rolled_back',
      'the guardrail to roll the rollout back',
      60_000,
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

  it('promotes a candidate shown within its threshold when autoPromote is on', async () => {
    // Promotion needs evidence that the candidate is no worse than the tolerated regression: with a
    // wide threshold (30 points) 100 executions an arm at the same failure rate show it.
    const { pipeline, run } = await pipelineInRollout('promoted by the trigger', {
      percent: 50,
      minExecutions: 30,
      autoPromote: true,
      guardrails: [{ metric: 'failure_rate', threshold: 0.3 }],
    });

    // One batch an arm (at most 100 records a batch).
    for (const executions of [
      arm(pipeline.activeConfigurationId, 100, 10),
      arm(run.proposedConfigurationId, 100, 10),
    ]) {
      expect((await api('POST', `/pipelines/${pipeline.id}/executions`, { executions })).status).toBe(201);
    }

    await waitFor(
      async () => (await api('GET', `/pipelines/${pipeline.id}/rollout`)).body?.status === 'promoted',
      'the guardrail to promote the rollout',
      60_000,
      200,
    );
    const rollout = (await api('GET', `/pipelines/${pipeline.id}/rollout`)).body;
    expect(rollout).toMatchObject({ endedBy: 'system' });
    expect(rollout.endReason).toContain('10.00 % (10 of 100)');
    expect((await api('GET', `/pipelines/${pipeline.id}`)).body).toMatchObject({
      activeConfigurationId: run.proposedConfigurationId,
      rollout: null,
    });
  });
});
