/**
 * Recording during a rollout guarding three metrics (failure_rate, duration_ms and a signal's
 * value) against recording on a pipeline with no rollout, through the local stack: POST …/executions
 * (100 a batch, with ids) and POST …/signals (100 a batch, each citing one of those executions with
 * a value), the two pipelines interleaved (A B C C B A) in the same run so drift hits both alike. The
 * figure is the ratio of the time a round (one batch of each) takes. Target ≤ 1.2 ×.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { GUARDRAIL_JUDGE } from '../lambdas/functions.ts';
import { startLocalStack } from '../local/stack.ts';
import { pipelineWithGeneratedRun, type StackApi, stackApi, UNLIMITED } from './stack-api.ts';

export const RECORDING_MAX_RATIO = 1.2;

/** The three guarded metrics of the rollout. */
export const THREE_GUARDRAILS = [
  { metric: 'failure_rate' },
  { metric: 'duration_ms', threshold: 100 },
  { metric: 'signal', kind: 'relevance', direction: 'higher_is_better', threshold: 0.05 },
];

export interface GuardedRecordingFigures {
  rounds: number;
  /** Median milliseconds of one executions batch, one signals batch and a round, per pipeline. */
  without: { executionsMs: number; signalsMs: number; roundMs: number };
  during: { executionsMs: number; signalsMs: number; roundMs: number };
  /** A rollout guarding the failure rate alone (the default), for comparison. */
  failureOnly: { executionsMs: number; signalsMs: number; roundMs: number };
  /** What the rollout counted: each arm's executions and the signal's observations. */
  counted: { base: number; applied: number; signalBase: number; signalApplied: number };
  expected: { executions: number; signals: number };
  /** The per-batch judge during the measured rounds (both rollouts), and how long they took. */
  judge: { invocations: number; ms: number; seconds: number };
}

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;

/** A batch of 100 executions with ids `<prefix>-<i>`, alternating between the arms. */
const executionBatch = (prefix: string, arms: readonly string[], from: number) => ({
  executions: Array.from({ length: 100 }, (_, i) => ({
    id: `${prefix}-${from + i}`,
    configurationId: arms[(from + i) % arms.length],
    status: (from + i) % 10 === 0 ? 'failed' : 'succeeded',
    durationMs: 100 + ((from + i) % 50),
    slotResults: [{ slotId: 'retrieve', status: 'succeeded', durationMs: 50 }],
  })),
});

/** A batch of 100 relevance scores, each citing one execution of the batch above. */
const signalBatch = (prefix: string, from: number) => ({
  signals: Array.from({ length: 100 }, (_, i) => ({
    kind: 'relevance',
    severity: 'info',
    message: `Relevance of answer ${from + i}`,
    executionId: `${prefix}-${from + i}`,
    value: ((from + i) % 7) / 7,
  })),
});

async function round(api: StackApi, pipelineId: string, arms: readonly string[], from: number) {
  const start = performance.now();
  await api('POST', `/pipelines/${pipelineId}/executions`, executionBatch('e', arms, from));
  const recorded = performance.now();
  await api('POST', `/pipelines/${pipelineId}/signals`, signalBatch('e', from));
  const end = performance.now();
  return { executionsMs: recorded - start, signalsMs: end - recorded, roundMs: end - start };
}

export async function measureGuardedRecording(rounds = 40): Promise<GuardedRecordingFigures> {
  const stateDir = await mkdtemp(path.join(tmpdir(), 'pipeline-synthesis-bench-recording-'));
  const stack = await startLocalStack({ port: 0, quiet: true, stateDir, limits: UNLIMITED });
  try {
    // The per-batch judge's invocations, timed: on the local stack it shares the 2 CPUs with the recording.
    const judge = stack.functions.get(GUARDRAIL_JUDGE.entry);
    const judging = { invocations: 0, ms: 0 };
    if (judge) {
      const invoke = judge.invoke.bind(judge);
      judge.invoke = async (...args: Parameters<typeof invoke>) => {
        if (process.env.BENCH_RECORDING_NO_JUDGE) throw new Error('the guardrail judge is off');
        const start = performance.now();
        try {
          return await invoke(...args);
        } finally {
          judging.invocations += 1;
          judging.ms += performance.now() - start;
        }
      };
    }
    const team = stack.teams[0];
    if (!team) throw new Error('the local stack seeds two teams');
    const api = stackApi(stack.apiUrl, team.apiToken);
    const during = await pipelineWithGeneratedRun(api, 'during a guarded rollout');
    const failureOnly = await pipelineWithGeneratedRun(api, 'during a rollout guarding the failure rate');
    const without = await pipelineWithGeneratedRun(api, 'without a rollout');
    // autoRollback (the default) makes every batch queue a guardrail check: its cost is measured.
    // The minimum is never reached, so the judge keeps the rollout.
    await api('POST', `/synthesis-runs/${during.run.id}/approve`, {
      rollout: { percent: 50, minExecutions: 100_000, guardrails: THREE_GUARDRAILS },
    });
    await api('POST', `/synthesis-runs/${failureOnly.run.id}/approve`, {
      rollout: { percent: 50, minExecutions: 100_000 },
    });
    const cases = {
      without: { id: without.pipeline.id, arms: [without.pipeline.activeConfigurationId] },
      failureOnly: {
        id: failureOnly.pipeline.id,
        arms: [failureOnly.pipeline.activeConfigurationId, failureOnly.run.proposedConfigurationId],
      },
      during: {
        id: during.pipeline.id,
        arms: [during.pipeline.activeConfigurationId, during.run.proposedConfigurationId],
      },
    };
    type Round = Awaited<ReturnType<typeof round>>;
    type Case = keyof typeof cases;
    const times: Record<Case, Round[]> = { without: [], failureOnly: [], during: [] };
    const order: Case[] = ['without', 'failureOnly', 'during'];
    // Warm every pipeline's path (functions, connections) before measuring.
    for (const name of order) await round(api, cases[name].id, cases[name].arms, 1_000_000);
    judging.invocations = 0;
    judging.ms = 0;
    const start = performance.now();
    // A B C C B A: each pipeline as often first as last.
    for (let i = 0; i < rounds; i += 2) {
      for (const name of order) times[name].push(await round(api, cases[name].id, cases[name].arms, i * 100));
      for (const name of [...order].reverse())
        times[name].push(await round(api, cases[name].id, cases[name].arms, (i + 1) * 100));
    }
    const seconds = (performance.now() - start) / 1000;
    const summary = (list: Round[]) => ({
      executionsMs: median(list.map((t) => t.executionsMs)),
      signalsMs: median(list.map((t) => t.signalsMs)),
      roundMs: median(list.map((t) => t.roundMs)),
    });
    const effect = await api('GET', `/synthesis-runs/${during.run.id}/effect`);
    // biome-ignore lint/suspicious/noExplicitAny: the effect's metrics, read by name
    const signal = effect.metrics?.find((metric: any) => metric.metric === 'signal');
    const recorded = (rounds + 1) * 100;
    return {
      rounds,
      without: summary(times.without),
      failureOnly: summary(times.failureOnly),
      during: summary(times.during),
      counted: {
        base: effect.arms.base.executions,
        applied: effect.arms.applied.executions,
        signalBase: signal?.base.n ?? 0,
        signalApplied: signal?.applied.n ?? 0,
      },
      expected: { executions: recorded / 2, signals: recorded / 2 },
      judge: { ...judging, seconds },
    };
  } finally {
    await stack.stop();
  }
}

export function formatGuardedRecording(f: GuardedRecordingFigures): string {
  const ok = (pass: boolean) => (pass ? 'ok' : 'MISSED');
  const r = (n: number) => n.toFixed(1);
  const ratio = f.during.roundMs / f.without.roundMs;
  const exact =
    f.counted.base === f.expected.executions &&
    f.counted.applied === f.expected.executions &&
    f.counted.signalBase === f.expected.signals &&
    f.counted.signalApplied === f.expected.signals;
  return [
    `recording during a rollout guarding failure_rate, duration_ms and signal relevance: a round (100 executions, then 100 signals citing them) p50 ${r(f.during.roundMs)} ms vs ${r(f.without.roundMs)} ms without a rollout, ${f.rounds} rounds each, interleaved: ${ratio.toFixed(2)}× (target ≤ ${RECORDING_MAX_RATIO}×) ${ok(ratio <= RECORDING_MAX_RATIO)}`,
    `  executions batch ${r(f.during.executionsMs)} ms vs ${r(f.without.executionsMs)} ms (${(f.during.executionsMs / f.without.executionsMs).toFixed(2)}×); signals batch ${r(f.during.signalsMs)} ms vs ${r(f.without.signalsMs)} ms (${(f.during.signalsMs / f.without.signalsMs).toFixed(2)}×)`,
    `  beside it, a rollout guarding the failure rate alone (the default): a round ${r(f.failureOnly.roundMs)} ms, ${(f.failureOnly.roundMs / f.without.roundMs).toFixed(2)}× (executions ${r(f.failureOnly.executionsMs)} ms, signals ${r(f.failureOnly.signalsMs)} ms)`,
    `  the per-batch judge ran ${f.judge.invocations} times in ${f.judge.seconds.toFixed(0)} s, ${(f.judge.ms / 1000).toFixed(1)} s in all (on the local stack it shares the CPUs; on AWS it is a Lambda of its own)`,
    `  counted exactly: executions base ${f.counted.base}, candidate ${f.counted.applied}; relevance base ${f.counted.signalBase}, candidate ${f.counted.signalApplied} (each ${f.expected.executions}) ${ok(exact)}`,
  ].join('\n');
}
