/**
 * Traffic for rollout tests on the local stack: a pipeline approved as a rollout, seeded draws
 * (the same numbers on every run), and executions and signals recorded through the API in
 * batches of 100, as a pipeline reports them.
 */
import { expect } from 'vitest';
import { DEMO_SLOTS } from '../../local/seed.ts';
import type { LocalStack } from '../../local/stack.ts';
import { waitFor } from './wait.ts';

/** A JSON call with the first seeded team's token. */
export function apiOf(stack: LocalStack) {
  return async (method: string, route: string, body?: unknown) => {
    const response = await fetch(`${stack.apiUrl}${route}`, {
      method,
      headers: { authorization: `Bearer ${stack.teams[0]?.apiToken}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    // biome-ignore lint/suspicious/noExplicitAny: response bodies are asserted field by field
    const answer: any = await response.json().catch(() => null);
    return { status: response.status, body: answer };
  };
}
export type Api = ReturnType<typeof apiOf>;

/** A pipeline of the demo's slots with a generated run (heuristic-v1 on four timeouts). */
export async function pipelineWithRun(api: Api, name: string) {
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
  return {
    pipelineId: pipeline.id as string,
    baseId: pipeline.activeConfigurationId as string,
    runId: started.id as string,
  };
}

/** A pipeline with a generated run, approved as a rollout with `rollout`'s settings. */
export async function pipelineInRollout(api: Api, name: string, rollout: object) {
  const generated = await pipelineWithRun(api, name);
  const approved = await api('POST', `/synthesis-runs/${generated.runId}/approve`, { rollout });
  expect(approved.status, JSON.stringify(approved.body)).toBe(200);
  return { ...generated, candidateId: approved.body.appliedConfigurationId as string };
}

/** A seeded uniform draw in [0, 1) (mulberry32): the same sequence for the same seed. */
export function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

/** A normal draw (Box–Muller) from a uniform one. */
export function normal(random: () => number, mean: number, sd: number): number {
  const u = Math.max(random(), Number.EPSILON);
  return mean + sd * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
}

/** How one arm behaves: its failure share, its durations and (optionally) its evaluation score. */
export interface ArmBehaviour {
  failureRate: number;
  durationMs: { mean: number; sd: number };
  score?: { mean: number; sd: number };
}

export interface Recorded {
  id: string;
  configurationId: string;
  status: 'succeeded' | 'failed';
  durationMs: number;
  score?: number;
}

/** One execution of an arm, drawn from its behaviour. */
export function drawExecution(
  random: () => number,
  id: string,
  configurationId: string,
  behaviour: ArmBehaviour,
): Recorded {
  const execution: Recorded = {
    id,
    configurationId,
    status: random() < behaviour.failureRate ? 'failed' : 'succeeded',
    durationMs: Math.max(0, Math.round(normal(random, behaviour.durationMs.mean, behaviour.durationMs.sd))),
  };
  if (behaviour.score) {
    const score = normal(random, behaviour.score.mean, behaviour.score.sd);
    execution.score = Math.min(1, Math.max(0, Math.round(score * 1000) / 1000));
  }
  return execution;
}

const chunks = <T>(items: readonly T[], size = 100): T[][] =>
  Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, (i + 1) * size));

export async function postExecutions(api: Api, pipelineId: string, executions: readonly Recorded[]) {
  for (const batch of chunks(executions)) {
    const answer = await api('POST', `/pipelines/${pipelineId}/executions`, {
      executions: batch.map(({ score: _score, ...execution }) => execution),
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  }
}

/** The evaluation score of each scored execution as a signal of `kind` citing it. */
export async function postScores(
  api: Api,
  pipelineId: string,
  kind: string,
  executions: readonly Recorded[],
) {
  const signals = executions.flatMap((execution) =>
    execution.score === undefined
      ? []
      : [
          {
            kind,
            severity: 'info',
            message: `${kind} ${execution.score}`,
            executionId: execution.id,
            value: execution.score,
          },
        ],
  );
  for (const batch of chunks(signals)) {
    const answer = await api('POST', `/pipelines/${pipelineId}/signals`, { signals: batch });
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  }
}
