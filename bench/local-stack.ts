/**
 * Latency and throughput of the local stack, each as a ratio against a baseline measured in the
 * same process on the same DynamoDB Local (these machines are shared and noisy: absolute numbers
 * mean little, ratios do).
 *
 *   - poll: GET /synthesis-runs/{id} through the local gateway (authorizer + handler) against one
 *     bare GetItem of the same item; p50 sequentially, and requests/s with 16 concurrent callers.
 *     Targets: p50 ≤ 3 × GetItem, throughput ≥ 0.35 × GetItem's (the execution environments cost
 *     the rest on 2 CPUs; the floor below shows what a stack without them reaches).
 *   - floor: the same handler bundle called by a plain HTTP server in its own process
 *     (bench/floor-server.ts), against GetItem: what no local stack can beat on this machine.
 *   - CPU per call by part (client, gateway, authorizer, handler, the stack's helper threads,
 *     DynamoDB Local): where a poll's time goes, whichever kind of environment runs the functions.
 *   - generate: POST …/synthesize → `generated` with heuristic-v1, median. Target ≤ 1 s.
 *   - load: 100 parallel starts on one pipeline and over ten (bench/load.ts).
 */

import { execFile, spawn } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { AUTHORIZER } from '../lambdas/functions.ts';
import { getSynthesisRun } from '../lambdas/operations/get-synthesis-run.ts';
import { type LocalStack, startLocalStack } from '../local/stack.ts';
import { type CpuSource, cpuPerOperation, descendants, processesCpu, threadCpu } from './cpu-breakdown.ts';
import type { FloorServerInput } from './floor-server.ts';
import { type LoadFigures, measureParallelStarts } from './load.ts';
import type { LoadClientInput, LoadClientOutput } from './load-client.ts';
import { UNLIMITED } from './stack-api.ts';

const execFileAsync = promisify(execFile);
export interface LocalStackFigures {
  getItemP50Ms: number;
  pollP50Ms: number;
  pollLatencyRatio: number;
  getItemPerSecond: number;
  pollPerSecond: number;
  pollThroughputRatio: number;
  generateMedianMs: number;
  load: LoadFigures[];
  /** The floor's polls/s (bench/floor-server.ts) against GetItem's, measured one after the other. */
  floor: { perSecond: number; getItemPerSecond: number; ratio: number };
  /** CPU µs per call by part: a bare GetItem's, a poll's through the stack, the floor's (null off Linux). */
  cpu: {
    getItem: Record<string, number>;
    poll: Record<string, number>;
    floor: Record<string, number>;
  } | null;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

/** Runs bench/load-client.ts in a child process and returns what it measured. */
export async function runLoadClient(input: LoadClientInput): Promise<LoadClientOutput> {
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
      ...(await measureFloorAndCpu(stack, input)),
      load: await measureParallelStarts(stack),
    } satisfies LocalStackFigures;
  } finally {
    await stack.stop();
  }
}

/** The floor server, started on the get-synthesis-run bundle with that function's variables. */
async function startFloorServer(stack: LocalStack, authorizer: Record<string, string>) {
  const poll = stack.functions.get(getSynthesisRun.name);
  if (!poll) throw new Error('the local stack has no get-synthesis-run function');
  const input: FloorServerInput = {
    bundle: poll.options.bundle,
    environment: { ...poll.options.environment, AWS_REGION: 'us-east-1' },
    authorizer,
  };
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(new URL('./floor-server.ts', import.meta.url)), JSON.stringify(input)],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const [url] = await Promise.race([
    createInterface({ input: child.stdout })
      [Symbol.asyncIterator]()
      .next()
      .then((line) => [line.value as string]),
    new Promise<never>((_, reject) => child.once('exit', () => reject(new Error('the floor server ended')))),
  ]);
  return { url: url ?? '', pid: child.pid ?? -1, stop: () => child.kill() };
}

/**
 * The poll against its floor, and where each one's CPU goes: the load client, the stack's own
 * process (the gateway), the authorizer's and the handler's environments, DynamoDB Local.
 */
async function measureFloorAndCpu(stack: LocalStack, input: LoadClientInput) {
  const team = stack.teams[0];
  const me = (await (
    await fetch(`${stack.apiUrl}/me`, { headers: { authorization: `Bearer ${team?.apiToken}` } })
  ).json()) as { user: { id: string }; authentication: Record<string, string> };
  const floorServer = await startFloorServer(stack, {
    ...me.authentication,
    principalId: me.user.id,
    userId: me.user.id,
  });
  try {
    const dynamodb = processesCpu(() =>
      descendants()
        .filter((process) => process.command.includes('DynamoDBLocal'))
        .map((process) => process.pid),
    );
    const environments =
      (entry: string): CpuSource =>
      async () => {
        const usage = (await stack.functions.get(entry)?.environmentCpuMicros()) ?? new Map<string, number>();
        return [...usage.values()].reduce((sum, micros) => sum + micros, 0);
      };
    const workers = stack.functions.get(getSynthesisRun.name)?.kind === 'worker';
    const once = async (
      only: 'getItem' | 'poll' | 'floor',
      parts: Record<string, CpuSource>,
      stackParts: { rest: string; within: string[] } | undefined = undefined,
    ) => {
      let output: LoadClientOutput | undefined;
      const cpu = await cpuPerOperation(
        parts,
        async () => {
          output = await runLoadClient({ ...input, only, floorUrl: floorServer.url });
          return output.operations ?? 1;
        },
        stackParts,
      );
      const operations = output?.operations ?? 1;
      const perSecond = output?.[only === 'getItem' ? 'getItemPerSecond' : 'pollPerSecond'] ?? 0;
      return { perSecond, cpu: cpu && { client: (output?.cpuMicros ?? 0) / operations, ...cpu } };
    };
    const getItem = await once('getItem', { 'DynamoDB Local': dynamodb });
    // The gateway is the stack's main thread; worker-thread environments report their own thread,
    // and what is left of the stack's process is V8's and libuv's helper threads (GC above all).
    const poll = await once(
      'poll',
      {
        gateway: threadCpu(),
        authorizer: environments(AUTHORIZER.entry),
        handler: environments(getSynthesisRun.name),
        'DynamoDB Local': dynamodb,
      },
      { rest: 'stack helpers', within: workers ? ['gateway', 'authorizer', 'handler'] : ['gateway'] },
    );
    const floor = await once('floor', {
      'floor server': processesCpu(() => [floorServer.pid]),
      'DynamoDB Local': dynamodb,
    });
    return {
      floor: {
        perSecond: floor.perSecond,
        getItemPerSecond: getItem.perSecond,
        ratio: floor.perSecond / getItem.perSecond,
      },
      cpu:
        getItem.cpu && poll.cpu && floor.cpu
          ? { getItem: getItem.cpu, poll: poll.cpu, floor: floor.cpu }
          : null,
    };
  } finally {
    floorServer.stop();
  }
}

/** The CPU breakdown as lines: µs per call by process, and each call's total. */
export function formatCpuBreakdown(cpu: NonNullable<LocalStackFigures['cpu']>): string {
  const line = (label: string, parts: Record<string, number>) => {
    const total = Object.values(parts).reduce((sum, value) => sum + value, 0);
    const each = Object.entries(parts).map(([name, micros]) => `${name} ${micros.toFixed(0)}`);
    return `  ${label}: ${total.toFixed(0)} µs CPU per call = ${each.join(' + ')}`;
  };
  return [
    'CPU per call, by part (16 callers):',
    line('GetItem', cpu.getItem),
    line('poll   ', cpu.poll),
    line('floor  ', cpu.floor),
  ].join('\n');
}
