/**
 * Guarded rollouts on the local stack, judged where they are in production: executions and
 * signals recorded through the API in batches, the per-batch judge (guardrail queue) and the
 * sweeper on its own schedule (every minute). An A/A rollout stays undecided; a worse evaluation
 * score or a worse mean duration at the same failure rate is rolled back naming that metric; a
 * ramp 5 → 20 → 50 ends promoted, a key in the candidate staying in it at every step.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalStack, startLocalStack } from '../../local/stack.ts';
import {
  type Api,
  type ArmBehaviour,
  apiOf,
  drawExecution,
  pipelineInRollout,
  postExecutions,
  postScores,
  type Recorded,
  seeded,
} from '../support/rollout-traffic.ts';
import { holdsWithin, waitFor } from '../support/wait.ts';

let stack: LocalStack;
let api: Api;

beforeAll(async () => {
  const stateDir = await mkdtemp(path.join(tmpdir(), 'pipeline-synthesis-guarded-metrics-'));
  stack = await startLocalStack({ port: 0, quiet: true, stateDir, log: () => {} });
  api = apiOf(stack);
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

/** The judge acts within seconds of a batch, the sweeper within its minute: this is a safety net. */
const DECISION_DEADLINE_MS = 90_000;
/** How long a ramp's step is given to hold on its traffic before the pipeline sends more. */
const STEP_PATIENCE_MS = 15_000;
/** The further batches a step may be sent before the test gives up on it. */
const MORE_TRAFFIC_BATCHES = 3;

/** `perArm` executions an arm, interleaved in recording order, each arm drawn from its behaviour. */
function traffic(
  seed: number,
  arms: { baseId: string; candidateId: string },
  perArm: number,
  base: ArmBehaviour,
  candidate: ArmBehaviour,
): Recorded[] {
  const random = seeded(seed);
  const executions: Recorded[] = [];
  for (let i = 0; i < perArm; i += 1) {
    executions.push(drawExecution(random, `s${seed}-b${i}`, arms.baseId, base));
    executions.push(drawExecution(random, `s${seed}-c${i}`, arms.candidateId, candidate));
  }
  return executions;
}

const rolloutOf = async (pipelineId: string) => (await api('GET', `/pipelines/${pipelineId}/rollout`)).body;

async function endedRollout(pipelineId: string, status: 'rolled_back' | 'promoted') {
  await waitFor(
    async () => (await rolloutOf(pipelineId))?.status === status,
    `the rollout to be ${status.replace('_', ' ')}`,
    DECISION_DEADLINE_MS,
    250,
  );
  return rolloutOf(pipelineId);
}

describe('guarded metrics, recorded and judged on the local stack', { timeout: 180_000 }, () => {
  it('keeps an A/A rollout undecided after 300 executions an arm on three guarded metrics', async () => {
    const rollout = await pipelineInRollout(api, 'A/A', {
      percent: 50,
      minExecutions: 30,
      autoPromote: true,
      autoRollback: true,
      guardrails: [
        { metric: 'failure_rate' },
        { metric: 'signal', kind: 'relevance', direction: 'higher_is_better', threshold: 0.05 },
        { metric: 'duration_ms' },
      ],
    });
    const same: ArmBehaviour = {
      failureRate: 0.1,
      durationMs: { mean: 400, sd: 80 },
      score: { mean: 0.7, sd: 0.15 },
    };
    const executions = traffic(11, rollout, 300, same, same);

    // Each batch's scores first (a signal may arrive before the execution it cites), then the
    // batch: every batch's judgement sees everything recorded so far.
    for (let i = 0; i < executions.length; i += 100) {
      const batch = executions.slice(i, i + 100);
      await postScores(api, rollout.pipelineId, 'relevance', batch);
      await postExecutions(api, rollout.pipelineId, batch);
    }

    // The judge has judged the last batch once a judgement counts all 300 candidate executions.
    const effectRoute = `/synthesis-runs/${rollout.runId}/effect?history=true`;
    await waitFor(
      async () => (await api('GET', effectRoute)).body?.history?.at(-1)?.n === 300,
      'a judgement of all 300 candidate executions',
      DECISION_DEADLINE_MS,
      250,
    );
    expect(await rolloutOf(rollout.pipelineId)).toMatchObject({ status: 'active', endedBy: null });
    const effect = (await api('GET', effectRoute)).body;
    expect(effect.verdict).toBe('no_significant_change');
    expect(
      effect.metrics.map((metric: { metric: string; applied: { n: number }; base: { n: number } }) => [
        metric.metric,
        metric.base.n,
        metric.applied.n,
      ]),
    ).toEqual([
      ['failure_rate', 300, 300],
      ['signal', 300, 300],
      ['duration_ms', 300, 300],
    ]);
    for (const metric of effect.metrics) expect(['worse', 'better']).not.toContain(metric.verdict);
    // Not promoted on the absence of evidence: one point of failure rate is not shown at 300 an arm.
    expect(effect.metrics[0].verdict).toBe('inconclusive');
    expect(effect.next).toContain('promotes once the figures show failure rate within 1.00 points');
  });

  it('rolls back a candidate whose evaluation score is worse at the same failure rate, naming the score', async () => {
    const rollout = await pipelineInRollout(api, 'worse score', {
      percent: 50,
      minExecutions: 30,
      autoRollback: true,
      guardrails: [
        { metric: 'failure_rate' },
        { metric: 'signal', kind: 'relevance', direction: 'higher_is_better', threshold: 0.05 },
      ],
    });
    const executions = traffic(
      12,
      rollout,
      200,
      { failureRate: 0.1, durationMs: { mean: 400, sd: 80 }, score: { mean: 0.8, sd: 0.1 } },
      { failureRate: 0.1, durationMs: { mean: 400, sd: 80 }, score: { mean: 0.6, sd: 0.1 } },
    );

    // As an evaluator reports: each batch first, its scores after it.
    for (let i = 0; i < executions.length; i += 100) {
      const batch = executions.slice(i, i + 100);
      await postExecutions(api, rollout.pipelineId, batch);
      await postScores(api, rollout.pipelineId, 'relevance', batch);
    }

    const ended = await endedRollout(rollout.pipelineId, 'rolled_back');
    expect(ended.endedBy).toBe('system');
    expect(ended.endReason).toMatch(
      /^Guardrail: signal relevance is worse on the candidate: signal relevance 0\.\d{3} \(n = [\d,]+\) on the candidate against 0\.\d{3} \(n = [\d,]+\) on the base, difference -0\.\d{3} \(interval -0\.\d{3} to -0\.\d{3}\), threshold 0\.050; rolled back automatically\.$/,
    );
    expect((await api('GET', `/pipelines/${rollout.pipelineId}`)).body).toMatchObject({
      activeConfigurationId: rollout.baseId,
      rollout: null,
    });
    const effect = (await api('GET', `/synthesis-runs/${rollout.runId}/effect`)).body;
    expect(effect.metrics.map((metric: { verdict: string }) => metric.verdict)).toEqual([
      expect.not.stringMatching(/^worse$/),
      'worse',
    ]);
  });

  it('rolls back a candidate whose mean duration is worse at the same failure rate, naming the duration', async () => {
    const rollout = await pipelineInRollout(api, 'slower', {
      percent: 50,
      minExecutions: 30,
      autoRollback: true,
      guardrails: [{ metric: 'failure_rate' }, { metric: 'duration_ms', threshold: 100 }],
    });
    const executions = traffic(
      13,
      rollout,
      200,
      { failureRate: 0.1, durationMs: { mean: 300, sd: 60 } },
      { failureRate: 0.1, durationMs: { mean: 450, sd: 60 } },
    );

    await postExecutions(api, rollout.pipelineId, executions);

    const ended = await endedRollout(rollout.pipelineId, 'rolled_back');
    expect(ended.endedBy).toBe('system');
    expect(ended.endReason).toMatch(
      /^Guardrail: mean duration is worse on the candidate: mean duration \d{3} ms \(n = 200\) on the candidate against \d{3} ms \(n = 200\) on the base, difference 1\d\d ms \(interval \d+ ms to \d+ ms\), threshold 100 ms; rolled back automatically\.$/,
    );
    expect(ended.endReason).not.toContain('failure rate');
  });

  it('ramps 5 → 20 → 50 % and ends promoted, a key in the candidate staying in it at every step', async () => {
    const rollout = await pipelineInRollout(api, 'ramp', {
      percent: 5,
      steps: [5, 20, 50],
      minExecutions: 30,
      autoPromote: true,
      autoRollback: true,
      guardrails: [
        { metric: 'failure_rate', threshold: 0.15 },
        { metric: 'duration_ms', threshold: 100 },
      ],
    });
    const keys = Array.from({ length: 400 }, (_, i) => `user-${i}`);
    const same: ArmBehaviour = { failureRate: 0.02, durationMs: { mean: 300, sd: 30 } };
    const random = seeded(14);
    const inCandidate = new Set<string>();
    const seenPercents: number[] = [];

    for (let round = 0; round < 3; round += 1) {
      const current = await rolloutOf(rollout.pipelineId);
      if (current.status !== 'active') break;
      seenPercents.push(current.percent);
      // Each key's arm now, as the pipeline reads it before it runs.
      const served = new Map<string, string>();
      for (const key of keys) {
        const answer = await api(
          'GET',
          `/pipelines/${rollout.pipelineId}/serving-configuration?routingKey=${key}`,
        );
        expect(answer.status).toBe(200);
        served.set(key, answer.body.configuration.id);
      }
      const candidates = keys.filter((key) => served.get(key) === rollout.candidateId);
      // Monotone: every key served the candidate at an earlier step still is.
      expect([...inCandidate].filter((key) => served.get(key) !== rollout.candidateId)).toEqual([]);
      expect(candidates.length).toBeGreaterThanOrEqual(inCandidate.size);
      for (const key of candidates) inCandidate.add(key);

      // Every key runs as often as it takes the candidate's keys to reach 60 executions at this
      // step, and again while the step holds: how many keys a share draws, and how many of 60
      // executions fail by chance, vary with the rollout's id, and a pipeline keeps running.
      const runs = Math.ceil(60 / Math.max(1, candidates.length));
      const movedOn = async () => {
        const now = await rolloutOf(rollout.pipelineId);
        return now.status !== 'active' || now.step > current.step;
      };
      for (let batch = 0; ; batch += 1) {
        const executions = keys.flatMap((key) =>
          Array.from({ length: runs }, (_, i) =>
            drawExecution(random, `ramp-${round}-${batch}-${key}-${i}`, served.get(key) as string, same),
          ),
        );
        await postExecutions(api, rollout.pipelineId, executions);
        if (batch === MORE_TRAFFIC_BATCHES) {
          await waitFor(
            movedOn,
            `the rollout to move on from ${current.percent} %`,
            DECISION_DEADLINE_MS,
            250,
          );
          break;
        }
        if (await holdsWithin(movedOn, STEP_PATIENCE_MS, 250)) break;
      }
    }

    const ended = await rolloutOf(rollout.pipelineId);
    expect(ended).toMatchObject({ status: 'promoted', endedBy: 'system', step: 2, percent: 50 });
    expect(seenPercents[0]).toBe(5);
    expect(seenPercents.at(-1)).toBe(50);
    expect(inCandidate.size).toBeGreaterThan(0);
    expect((await api('GET', `/pipelines/${rollout.pipelineId}`)).body.activeConfigurationId).toBe(
      rollout.candidateId,
    );
    // Promoted: every key, the candidate's among them, now runs the candidate as the active configuration.
    const after = await api(
      'GET',
      `/pipelines/${rollout.pipelineId}/serving-configuration?routingKey=user-0`,
    );
    expect(after.body).toMatchObject({
      arm: 'active',
      configuration: { id: rollout.candidateId },
      rolloutId: null,
    });
  });
});
