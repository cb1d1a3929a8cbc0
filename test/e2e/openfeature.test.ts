/**
 * The loop closed with no code of ours in the pipeline: a child process that reads its
 * configuration with the published OpenFeature server SDK and OFREP provider, records each
 * evaluation on its trace with OpenFeature's OpenTelemetry hook and exports its traces with the
 * OpenTelemetry SDK's OTLP exporter (test/support/openfeature-pipeline/pipeline.mjs), against the
 * local stack: a 50 % rollout, a candidate that fails more often, the executions attributed to
 * their configuration from the traces alone, the effect `worse`, the guardrail's rollback, and the
 * same client served the base afterwards (the stack's sweeper runs every second here).
 */
import { spawn } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RUN_SWEEPER } from '../../lambdas/functions.ts';
import { REPO_ROOT } from '../../lib/bundling.ts';
import { DEMO_SLOTS } from '../../local/seed.ts';
import { type LocalStack, startLocalStack } from '../../local/stack.ts';
import { waitFor } from '../support/wait.ts';

/** The OTLP ingest endpoint ("OpenTelemetry in") is what the traces go to. */
const PIPELINE_SCRIPT = path.join(REPO_ROOT, 'test', 'support', 'openfeature-pipeline', 'pipeline.mjs');

let stack: LocalStack;
let token: string;

beforeAll(async () => {
  const stateDir = await mkdtemp(path.join(tmpdir(), 'pipeline-synthesis-openfeature-'));
  stack = await startLocalStack({
    port: 0,
    quiet: true,
    stateDir,
    scheduleEveryMs: { [RUN_SWEEPER.entry]: 1_000 },
  });
  token = stack.teams[0]?.apiToken ?? '';
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

async function api(method: string, route: string, body?: unknown) {
  const response = await fetch(`${stack.apiUrl}${route}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  // biome-ignore lint/suspicious/noExplicitAny: response bodies are asserted field by field
  const answer: any = await response.json().catch(() => null);
  return { status: response.status, body: answer };
}

/** Runs the pipeline process to its end; its stdout's JSON lines. */
function pipeline(args: string[], env: Record<string, string>): Promise<Array<Record<string, unknown>>> {
  const child = spawn(process.execPath, [PIPELINE_SCRIPT, ...args], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', API_URL: stack.apiUrl, API_TOKEN: token, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => {
    stdout += chunk;
  });
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  return new Promise((resolve, reject) =>
    child.once('close', (code) => {
      if (code !== 0) reject(new Error(`the pipeline exited ${code}: ${stderr}`));
      else
        resolve(
          stdout
            .trim()
            .split('\n')
            .filter(Boolean)
            .map((line) => JSON.parse(line)),
        );
    }),
  );
}

/** A pipeline whose generated proposal is rolled out to `percent` of the routing keys. */
async function rolledOut(percent: number) {
  const created = (await api('POST', '/pipelines', { name: 'support-bot', slots: DEMO_SLOTS })).body;
  await api('POST', `/pipelines/${created.id}/signals`, {
    signals: Array.from({ length: 4 }, (_, i) => ({
      kind: 'timeout',
      severity: 'critical',
      message: `Retrieval timed out (${i})`,
      slotId: 'retrieve',
    })),
  });
  const started = (await api('POST', `/pipelines/${created.id}/synthesize`, {})).body;
  await waitFor(
    async () => (await api('GET', `/synthesis-runs/${started.id}`)).body?.status === 'generated',
    'the run to be generated',
    30_000,
  );
  const approved = await api('POST', `/synthesis-runs/${started.id}/approve`, {
    rollout: { percent, minExecutions: 30 },
  });
  expect(approved.status).toBe(200);
  return {
    pipelineId: created.id as string,
    baseId: created.activeConfigurationId as string,
    candidateId: approved.body.appliedConfigurationId as string,
    runId: started.id as string,
  };
}

const KEYS = Array.from({ length: 60 }, (_, i) => `conversation-${i}`);

describe('a pipeline reading its configuration through OpenFeature', { timeout: 180_000 }, () => {
  it('gets, from the published OFREP provider, the configuration serving-configuration gives each key', async () => {
    const { pipelineId, baseId, candidateId } = await rolledOut(50);

    const evaluations = await pipeline(['evaluate', ...KEYS], { PIPELINE_ID: pipelineId });

    expect(evaluations).toHaveLength(KEYS.length);
    for (const evaluation of evaluations) {
      const served = await api(
        'GET',
        `/pipelines/${pipelineId}/serving-configuration?routingKey=${evaluation.targetingKey}`,
      );
      expect(evaluation).toMatchObject({
        configurationId: served.body.configuration.id,
        variant: served.body.configuration.id,
        reason: 'SPLIT',
        flagMetadata: { arm: served.body.arm === 'active' ? 'base' : 'candidate' },
      });
      expect(evaluation.errorCode).toBeUndefined();
    }
    expect(new Set(evaluations.map((evaluation) => evaluation.variant))).toEqual(
      new Set([baseId, candidateId]),
    );
  });

  it('falls back to the default value (the configuration last shipped) when the API refuses or cannot be reached', async () => {
    const { pipelineId } = await rolledOut(50);

    const [refused] = await pipeline(['evaluate', 'user-1'], {
      PIPELINE_ID: pipelineId,
      API_TOKEN: 'not-a-token',
    });
    const [unreachable] = await pipeline(['evaluate', 'user-1'], {
      PIPELINE_ID: pipelineId,
      API_URL: 'http://127.0.0.1:9',
    });
    const [unknown] = await pipeline(['evaluate', 'user-1'], { PIPELINE_ID: 'no-such-pipeline' });

    for (const fallback of [refused, unreachable, unknown])
      expect(fallback).toMatchObject({ configurationId: 'last-shipped', errorCode: expect.any(String) });
    expect(unknown?.errorCode).toBe('FLAG_NOT_FOUND');
  });

  it('is measured by arm from its traces alone, and served the base again once the guardrail rolls the worse candidate back', async () => {
    const { pipelineId, baseId, candidateId, runId } = await rolledOut(50);

    const [report] = await pipeline(['run', '200'], {
      PIPELINE_ID: pipelineId,
      WORSE_CONFIGURATION_ID: candidateId,
      // The whole exporter set-up the README gives a team.
      OTEL_EXPORTER_OTLP_ENDPOINT: `${stack.apiUrl}/pipelines/${pipelineId}/otlp`,
      OTEL_EXPORTER_OTLP_HEADERS: `Authorization=Bearer%20${token}`,
    });
    const served = (report?.served ?? {}) as Record<string, number>;
    const failed = (report?.failed ?? {}) as Record<string, number>;
    expect(served[baseId]).toBeGreaterThan(30);
    expect(served[candidateId]).toBeGreaterThan(30);

    await waitFor(
      async () => (await api('GET', `/pipelines/${pipelineId}/rollout`)).body?.status === 'rolled_back',
      'the guardrail to roll the candidate back',
      60_000,
      250,
    );
    const rollout = (await api('GET', `/pipelines/${pipelineId}/rollout`)).body;
    expect(rollout).toMatchObject({ endedBy: 'system', status: 'rolled_back' });
    const effect = (await api('GET', `/synthesis-runs/${runId}/effect`)).body;
    expect(effect.verdict).toBe('worse');
    // Only the candidate ever failed: an execution recorded without its configuration would
    // have counted as the base's.
    expect(effect.arms.base.failed).toBe(0);
    expect(effect.arms.applied.failed).toBeGreaterThan(0);
    expect(effect.arms.applied.failed).toBeLessThanOrEqual(failed[candidateId] ?? 0);
    expect(effect.arms.base.executions + effect.arms.applied.executions).toBeLessThanOrEqual(200);

    const after = await pipeline(['evaluate', ...KEYS], { PIPELINE_ID: pipelineId });
    expect(after.map((evaluation) => evaluation.variant)).toEqual(KEYS.map(() => baseId));
    expect(after.every((evaluation) => evaluation.reason === 'STATIC')).toBe(true);
  });
});
