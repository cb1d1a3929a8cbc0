/**
 * Latency and throughput of the local stack, each as a ratio against a baseline measured in the
 * same process on the same DynamoDB Local (these machines are shared and noisy: absolute numbers
 * mean little, ratios do).
 *
 *   - poll: GET /synthesis-runs/{id} through the local gateway (authorizer + handler) against one
 *     bare GetItem of the same item; p50 sequentially, and requests/s with 16 concurrent callers.
 *     Targets: p50 ≤ 3 × GetItem, throughput ≥ 0.5 × GetItem's.
 *   - generate: POST …/synthesize → `generated` with heuristic-v1, median. Target ≤ 1 s.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient } from '../lambdas/platform/aws.ts';
import { startLocalStack } from '../local/stack.ts';

export interface LocalStackFigures {
  getItemP50Ms: number;
  pollP50Ms: number;
  pollLatencyRatio: number;
  getItemPerSecond: number;
  pollPerSecond: number;
  pollThroughputRatio: number;
  generateMedianMs: number;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

async function timeEach(count: number, operation: () => Promise<unknown>): Promise<number[]> {
  const durations: number[] = [];
  for (let i = 0; i < count; i++) {
    const start = performance.now();
    await operation();
    durations.push(performance.now() - start);
  }
  return durations;
}

/** Operations per second with `callers` concurrent loops for `ms` milliseconds. */
async function throughput(callers: number, ms: number, operation: () => Promise<unknown>): Promise<number> {
  let done = 0;
  const until = performance.now() + ms;
  await Promise.all(
    Array.from({ length: callers }, async () => {
      while (performance.now() < until) {
        await operation();
        done++;
      }
    }),
  );
  return done / (ms / 1000);
}

export async function measureLocalStack(options: { samples?: number; throughputMs?: number } = {}) {
  const samples = options.samples ?? 400;
  const throughputMs = options.throughputMs ?? 3_000;
  const stateDir = await mkdtemp(path.join(tmpdir(), 'pipeline-synthesis-bench-'));
  const stack = await startLocalStack({ port: 0, quiet: true, stateDir });
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

    const db = createDocumentClient(
      new DynamoDBClient({
        endpoint: stack.dynamodbEndpoint,
        region: 'us-east-1',
        credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      }),
    );
    const getItem = () => db.send(new GetCommand({ TableName: process.env.RUNS_TABLE, Key: { id: runId } }));
    const poll = async () => {
      const response = await api('GET', `/synthesis-runs/${runId}`);
      if (response.status !== 200) throw new Error(`poll answered ${response.status}`);
      await response.arrayBuffer();
    };

    // Warm both paths (JIT, connections, the authorizer's cache) before measuring.
    await timeEach(100, getItem);
    await timeEach(100, poll);
    const getItemTimes = await timeEach(samples, getItem);
    const pollTimes = await timeEach(samples, poll);
    const getItemPerSecond = await throughput(16, throughputMs, getItem);
    const pollPerSecond = await throughput(16, throughputMs, poll);

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
    } satisfies LocalStackFigures;
  } finally {
    await stack.stop();
  }
}
