/**
 * Latency and throughput of the local stack, each as a ratio against a baseline measured in the
 * same process on the same DynamoDB Local (these machines are shared and noisy: absolute numbers
 * mean little, ratios do).
 *
 *   - poll: GET /synthesis-runs/{id} through the local gateway (authorizer + handler) against one
 *     bare GetItem of the same item; p50 sequentially, and requests/s with 16 concurrent callers.
 *     Targets: p50 ≤ 3 × GetItem, throughput ≥ 0.5 × GetItem's.
 *   - generate: POST …/synthesize → `generated` with heuristic-v1, median. Target ≤ 1 s.
 *   - load: 100 parallel starts on one pipeline and over ten (bench/load.ts).
 */

import { execFile } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { DEFAULT_LIMITS } from '../lambdas/limits.ts';
import { startLocalStack } from '../local/stack.ts';
import { type LoadFigures, measureParallelStarts } from './load.ts';
import type { LoadClientInput, LoadClientOutput } from './load-client.ts';

const execFileAsync = promisify(execFile);
const UNLIMITED = {
  ...DEFAULT_LIMITS,
  requestsPerSecondPerCredential: 1_000_000,
  burstPerCredential: 1_000_000,
};

export interface LocalStackFigures {
  getItemP50Ms: number;
  pollP50Ms: number;
  pollLatencyRatio: number;
  getItemPerSecond: number;
  pollPerSecond: number;
  pollThroughputRatio: number;
  generateMedianMs: number;
  load: LoadFigures[];
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

/** Runs bench/load-client.ts in a child process and returns what it measured. */
async function runLoadClient(input: LoadClientInput): Promise<LoadClientOutput> {
  const { stdout } = await execFileAsync(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(new URL('./load-client.ts', import.meta.url)), JSON.stringify(input)],
    {
      maxBuffer: 16 * 1024 * 1024,
      env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    },
  );
  return JSON.parse(stdout) as LoadClientOutput;
}

export async function measureLocalStack(options: { samples?: number; throughputMs?: number } = {}) {
  const samples = options.samples ?? 400;
  const throughputMs = options.throughputMs ?? 3_000;
  const stateDir = await mkdtemp(path.join(tmpdir(), 'pipeline-synthesis-bench-'));
  // Capacity, not fairness, is measured here: the per-credential rate limits are lifted.
  const stack = await startLocalStack({ port: 0, quiet: true, stateDir, limits: UNLIMITED });
  try {
    const team = stack.teams[0];
    if (!team) throw new Error('the local stack seeds two teams');
    const headers = { authorization: `Bearer ${team.apiToken}`, 'content-type': 'application/json' };
    const api = (method: string, route: string) => fetch(`${stack.apiUrl}${route}`, { method, headers });

    async function generateOnce(): Promise<{ ms: number; runId: string }> {
      const start = performance.now();
      const run = (await (await api('POST', `/pipelines/${team?.pipelineIds[0]}/synthesize`)).json()) as {
        id: string;
      };
      for (;;) {
        const polled = (await (await api('GET', `/synthesis-runs/${run.id}`)).json()) as { status: string };
        if (polled.status === 'generated' || polled.status === 'failed') break;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      return { ms: performance.now() - start, runId: run.id };
    }

    const generations = [];
    for (let i = 0; i < 15; i++) generations.push(await generateOnce());
    const runId = generations[0]?.runId as string;

    // The callers run in a process of their own, as real callers do: the local stack's process
    // then does only what the API does, and the baseline is measured from the same place.
    const input: LoadClientInput = {
      apiUrl: stack.apiUrl,
      dynamodbEndpoint: stack.dynamodbEndpoint,
      runsTable: stack.tables.Runs,
      runId,
      apiToken: team.apiToken,
      samples,
      throughputMs,
      callers: 16,
    };
    const load = await runLoadClient(input);
    const getItemTimes = load.getItemMs;
    const pollTimes = load.pollMs;
    const { getItemPerSecond, pollPerSecond } = load;

    const getItemP50Ms = percentile(getItemTimes, 50);
    const pollP50Ms = percentile(pollTimes, 50);
    return {
      getItemP50Ms,
      pollP50Ms,
      pollLatencyRatio: pollP50Ms / getItemP50Ms,
      getItemPerSecond,
      pollPerSecond,
      pollThroughputRatio: pollPerSecond / getItemPerSecond,
      generateMedianMs: percentile(
        generations.map((g) => g.ms),
        50,
      ),
      load: await measureParallelStarts(stack),
    } satisfies LocalStackFigures;
  } finally {
    await stack.stop();
  }
}
