/**
 * The per-batch guardrail through the local stack, with the sweeper an hour apart (so it is never
 * what ends a rollout here):
 *   - recorded → rolled back: from the POST of a batch that makes the candidate clearly worse to
 *     GET …/rollout answering rolled_back (target: within a minute, as the sweeper promises).
 *   - coalescing: 100 batches of one rollout's executions sent within about a second, and how many
 *     times the judge was invoked for them (the event source's batching window gathers them).
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { GUARDRAIL_JUDGE, RUN_SWEEPER } from '../lambdas/functions.ts';
import { startLocalStack } from '../local/stack.ts';
import { pipelineWithGeneratedRun, stackApi, UNLIMITED } from './stack-api.ts';

export interface GuardrailFigures {
  /** Milliseconds from the POST to the rollback being visible, one a rollout. */
  rolledBackMs: number[];
  burst: { batches: number; sendMs: number; invocations: number; records: number };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;

export async function measureGuardrail(rollouts = 5): Promise<GuardrailFigures> {
  const stateDir = await mkdtemp(path.join(tmpdir(), 'pipeline-synthesis-bench-guardrail-'));
  const stack = await startLocalStack({
    port: 0,
    quiet: true,
    stateDir,
    limits: UNLIMITED,
    scheduleEveryMs: { [RUN_SWEEPER.entry]: 3_600_000 },
  });
  try {
    const team = stack.teams[0];
    if (!team) throw new Error('the local stack seeds two teams');
    const api = stackApi(stack.apiUrl, team.apiToken);
    const inRollout = async (name: string, minExecutions: number) => {
      const { pipeline, run } = await pipelineWithGeneratedRun(api, name);
      await api('POST', `/synthesis-runs/${run.id}/approve`, { rollout: { percent: 50, minExecutions } });
      return { pipeline, run };
    };
    const arm = (configurationId: string, n: number, failed: number) =>
      Array.from({ length: n }, (_, i) => ({
        configurationId,
        status: i < failed ? 'failed' : 'succeeded',
        durationMs: 100,
      }));

    const rolledBackMs: number[] = [];
    for (let i = 0; i < rollouts; i++) {
      const { pipeline, run } = await inRollout(`guarded ${i}`, 30);
      const start = performance.now();
      await api('POST', `/pipelines/${pipeline.id}/executions`, {
        executions: [
          ...arm(pipeline.activeConfigurationId, 40, 0),
          ...arm(run.proposedConfigurationId, 40, 20),
        ],
      });
      for (;;) {
        const rollout = await api('GET', `/pipelines/${pipeline.id}/rollout`);
        if (rollout.status === 'rolled_back') break;
        if (performance.now() - start > 120_000) throw new Error('no rollback within two minutes');
        await sleep(25);
      }
      rolledBackMs.push(performance.now() - start);
    }

    // Count the judge's invocations: the event source calls the function's invoke each time.
    const judge = stack.functions.get(GUARDRAIL_JUDGE.entry);
    if (!judge) throw new Error(`no local function ${GUARDRAIL_JUDGE.entry}`);
    await sleep(GUARDRAIL_JUDGE.trigger.maxBatchingWindowSeconds * 1000 + 1_000); // the last checks above
    let invocations = 0;
    let records = 0;
    const invoke = judge.invoke.bind(judge);
    judge.invoke = (event, ...rest) => {
      invocations += 1;
      records += (event as { Records?: unknown[] }).Records?.length ?? 0;
      return invoke(event, ...rest);
    };
    const { pipeline } = await inRollout('burst', 100_000);
    const batches = 100;
    const sendStart = performance.now();
    await Promise.all(
      Array.from({ length: batches }, async (_, i) => {
        await sleep(i * 10); // 100 a second
        await api('POST', `/pipelines/${pipeline.id}/executions`, {
          executions: arm(pipeline.activeConfigurationId, 1, i % 2),
        });
      }),
    );
    const sendMs = performance.now() - sendStart;
    const drained = performance.now() + 30_000;
    while (records < batches && performance.now() < drained) await sleep(100);
    return { rolledBackMs, burst: { batches, sendMs, invocations, records } };
  } finally {
    await stack.stop();
  }
}

export function formatGuardrail(f: GuardrailFigures): string {
  const worst = Math.max(...f.rolledBackMs);
  const window = GUARDRAIL_JUDGE.trigger.maxBatchingWindowSeconds;
  return [
    `recorded → rolled back (per-batch guardrail, no sweeper) median ${median(f.rolledBackMs).toFixed(0)} ms, worst ${worst.toFixed(0)} ms of ${f.rolledBackMs.length} (target ≤ 60000 ms; the batching window is ${window} s) ${worst <= 60_000 ? 'ok' : 'MISSED'}`,
    `${f.burst.batches} batches of one rollout in ${f.burst.sendMs.toFixed(0)} ms → ${f.burst.invocations} judge invocation(s) for ${f.burst.records} checks (each invocation judges the rollout once)`,
  ].join('\n');
}
