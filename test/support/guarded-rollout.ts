/*
 * A rollout guarding two metrics (the mean duration and a relevance score), fed through the API in
 * rounds so that the per-batch judge keeps several judgements for the effect's history: what the
 * review app's browser test and `npm run screenshots` open. The arms behave alike (nothing is
 * shown worse) and the step's minimum is not reached, so the rollout keeps collecting.
 */
import { DEMO_SLOTS } from '../../local/seed.ts';
import { waitFor } from './wait.ts';

// biome-ignore lint/suspicious/noExplicitAny: answers are read field by field
export type Call = (method: 'GET' | 'POST', route: string, body?: unknown) => Promise<any>;

export const GUARDED_MIN_EXECUTIONS = 400;
export const GUARDED_ROUNDS = 3;
/** Executions an arm records a round. */
export const GUARDED_PER_ARM = 100;

/** A new pipeline with four retrieval timeouts and its heuristic-v1 run, once generated. */
export async function generatedRun(call: Call, name: string) {
  const pipeline = await call('POST', 'pipelines', { name, slots: DEMO_SLOTS });
  await call('POST', `pipelines/${pipeline.id}/signals`, {
    signals: Array.from({ length: 4 }, (_, i) => ({
      kind: 'timeout',
      severity: 'critical',
      message: `Retrieval timed out (${i})`,
      slotId: 'retrieve',
    })),
  });
  const started = await call('POST', `pipelines/${pipeline.id}/synthesize`, {
    synthesisHandler: 'heuristic-v1',
  });
  await waitFor(
    async () => (await call('GET', `synthesis-runs/${started.id}`)).status === 'generated',
    `run ${started.id} to be generated`,
    30_000,
    100,
  );
  const run = await call('GET', `synthesis-runs/${started.id}`);
  return { pipeline, run };
}

/** A pipeline with a generated heuristic-v1 run, approved into a 50 % → 80 % rollout guarding two metrics. */
export async function guardedRollout(
  call: Call,
  name: string,
): Promise<{ pipelineId: string; runId: string }> {
  const { pipeline, run } = await generatedRun(call, name);
  await call('POST', `synthesis-runs/${run.id}/approve`, {
    rollout: {
      percent: 50,
      steps: [50, 80],
      minExecutions: GUARDED_MIN_EXECUTIONS,
      guardrails: [
        { metric: 'duration_ms', threshold: 100 },
        { metric: 'signal', kind: 'relevance', direction: 'higher_is_better', threshold: 0.05 },
      ],
    },
  });
  const arms = [pipeline.activeConfigurationId as string, run.proposedConfigurationId as string];
  for (let round = 0; round < GUARDED_ROUNDS; round++) {
    for (const [a, configurationId] of arms.entries()) {
      const ids = Array.from({ length: GUARDED_PER_ARM }, (_, i) => `r${round}-${a}-${i}`);
      await call('POST', `pipelines/${pipeline.id}/executions`, {
        executions: ids.map((id, i) => ({
          id,
          configurationId,
          status: i % 10 === 0 ? 'failed' : 'succeeded',
          // The candidate a little slower, well within the 100 ms tolerated.
          durationMs: 800 + ((i * 37) % 200) + a * 10,
        })),
      });
      await call('POST', `pipelines/${pipeline.id}/signals`, {
        signals: ids.map((id, i) => ({
          kind: 'relevance',
          severity: 'info',
          message: `Relevance of ${id}`,
          executionId: id,
          value: 0.5 + ((i * 13) % 10) / 20,
        })),
      });
    }
    // Each round is judged (the per-batch check) before the next: one more point on the charts.
    await waitFor(
      async () =>
        ((await call('GET', `synthesis-runs/${run.id}/effect?history=true`)).history?.length ?? 0) > round,
      `judgement ${round + 1} of the rollout`,
      30_000,
      100,
    );
  }
  return { pipelineId: pipeline.id, runId: run.id };
}
