/*
 * `optimize` against the rounds run by hand, through the local stack with the CLI as a real
 * process: `optimize --per-change` on a simulated pipeline with a 100-case set, then the same
 * rounds as `synthesize --wait` and `evaluate --per-change` on a copy of the pipeline, alternating.
 * A counting proxy in front of the API gives the requests and the results each one posted.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { buildCli, CLI_BIN } from '../cli/build.ts';
import { startLocalStack } from '../local/stack.ts';
import { SIM_SLOTS } from './optimize.ts';
import { BASE_SETTINGS, generateCases, type SimCase, seeded, simulate } from './optimize-sim.ts';
import { type StackApi, stackApi, UNLIMITED } from './stack-api.ts';

const PAIRS = 2;
const CASES = 100;

export interface OptimizeStackFigures {
  pairs: { optimizeMs: number; byHandMs: number }[];
  rounds: number;
  optimizeRequests: number;
  byHandRequests: number;
  results: number;
  byHandResults: number;
}

/** Counts the requests and the evaluation results posted through it to `target`. */
async function countingProxy(target: URL) {
  const counts = { requests: 0, results: 0 };
  const server: Server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      counts.requests++;
      const body = Buffer.concat(chunks);
      if (incoming.method === 'POST' && incoming.url?.endsWith('/evaluations'))
        counts.results += (JSON.parse(body.toString('utf8')) as { results: unknown[] }).results.length;
      const upstream = httpRequest(
        new URL(incoming.url ?? '/', target.origin),
        { method: incoming.method, headers: { ...incoming.headers, host: target.host } },
        (answer) => {
          outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(outgoing);
        },
      );
      upstream.on('error', () => outgoing.writeHead(502).end());
      upstream.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${target.pathname.replace(/\/$/, '')}`,
    counts,
    take() {
      const taken = { ...counts };
      counts.requests = 0;
      counts.results = 0;
      return taken;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A pipeline of the simulated slots with 50 cases failing on the base and 50 passing, a signal per failure. */
async function simulatedPipeline(api: StackApi, name: string, cases: readonly SimCase[]): Promise<string> {
  const pipeline = await api('POST', '/pipelines', { name, slots: SIM_SLOTS });
  const now = Date.now();
  const executions = cases.map((entry, index) => {
    const outcome = simulate(BASE_SETTINGS, entry);
    return {
      id: `${name}-${entry.id}`,
      status: outcome.passed ? 'succeeded' : 'failed',
      durationMs: 900,
      startedAt: new Date(now - (cases.length - index) * 60_000).toISOString(),
      input: entry,
      ...(outcome.passed
        ? {}
        : {
            error: outcome.error,
            slotResults: [
              { slotId: outcome.slotId, status: 'failed', durationMs: 900, error: outcome.error },
            ],
          }),
    };
  });
  await api('POST', `/pipelines/${pipeline.id}/executions`, { executions });
  const signals = executions.flatMap((execution) =>
    execution.status === 'failed'
      ? [
          {
            kind: 'error',
            severity: 'warning',
            message: execution.error,
            slotId: execution.slotResults?.[0]?.slotId,
            executionId: execution.id,
          },
        ]
      : [],
  );
  await api('POST', `/pipelines/${pipeline.id}/signals`, { signals });
  return pipeline.id as string;
}

/** Half the cases fail on the base: the set is all of them (50 failed, 50 succeeded). */
function balancedCases(): SimCase[] {
  const drawn = generateCases(seeded(38), 1_000, 'case');
  const passing = drawn.filter((entry) => simulate(BASE_SETTINGS, entry).passed).slice(0, CASES / 2);
  const failing = drawn.filter((entry) => !simulate(BASE_SETTINGS, entry).passed).slice(0, CASES / 2);
  return [...failing, ...passing];
}

/** Runs the CLI once; its stdout, and how long the process took from spawn to exit. */
function cli(args: string[], env: NodeJS.ProcessEnv, okCodes: number[] = [0]) {
  const started = performance.now();
  return new Promise<{ stdout: string; ms: number }>((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.once('close', (code) =>
      okCodes.includes(code ?? -1)
        ? resolve({ stdout, ms: performance.now() - started })
        : reject(new Error(`${args[0]} exited ${code}: ${stderr}`)),
    );
  });
}

const lastLine = (stdout: string) => JSON.parse(stdout.trim().split('\n').at(-1) as string);

export async function measureOptimizeStack(): Promise<OptimizeStackFigures> {
  await buildCli();
  const workDir = await mkdtemp(path.join(tmpdir(), 'pipeline-synthesis-bench-optimize-'));
  const runner = path.join(workDir, 'runner.mjs');
  await build({
    entryPoints: [fileURLToPath(new URL('optimize-runner.ts', import.meta.url))],
    outfile: runner,
    bundle: true,
    platform: 'node',
    format: 'esm',
    logLevel: 'warning',
  });
  const stack = await startLocalStack({
    port: 0,
    stateDir: path.join(workDir, 'state'),
    quiet: true,
    log: () => {},
    limits: UNLIMITED,
  });
  const proxy = await countingProxy(new URL(stack.apiUrl));
  try {
    const token = stack.teams[0]?.apiToken as string;
    const api = stackApi(stack.apiUrl, token);
    const env = {
      ...process.env,
      PIPELINE_SYNTHESIS_API_URL: proxy.url,
      PIPELINE_SYNTHESIS_API_TOKEN: token,
      LOCAL_STATE_DIR: path.join(workDir, 'state'),
    };
    const exec = `${JSON.stringify(process.execPath)} ${JSON.stringify(runner)}`;
    const cases = balancedCases();
    const figures: OptimizeStackFigures = {
      pairs: [],
      rounds: 0,
      optimizeRequests: 0,
      byHandRequests: 0,
      results: 0,
      byHandResults: 0,
    };
    for (let pair = 0; pair < PAIRS; pair++) {
      const optimized = await simulatedPipeline(api, `o${pair}`, cases);
      const byHand = await simulatedPipeline(api, `h${pair}`, cases);
      proxy.take();
      const run = await cli(
        ['optimize', optimized, '--exec', exec, '--handler', 'heuristic-v1', '--per-change', '--json'],
        env,
      );
      const summary = lastLine(run.stdout) as { rounds: unknown[] };
      const optimizeCounts = proxy.take();
      let byHandMs = 0;
      let parent: string | undefined;
      for (let round = 0; round < summary.rounds.length; round++) {
        const started = await cli(
          [
            'synthesize',
            byHand,
            '--handler',
            'heuristic-v1',
            ...(parent ? ['--parent', parent] : []),
            '--wait',
            '--json',
          ],
          env,
        );
        parent = lastLine(started.stdout).id as string;
        // Exit 5: a case regressed, which a round may well do.
        const evaluated = await cli(
          ['evaluate', parent, '--exec', exec, '--per-change', '--json'],
          env,
          [0, 5],
        );
        byHandMs += started.ms + evaluated.ms;
      }
      const byHandCounts = proxy.take();
      figures.pairs.push({ optimizeMs: run.ms, byHandMs });
      figures.rounds += summary.rounds.length;
      figures.optimizeRequests += optimizeCounts.requests;
      figures.results += optimizeCounts.results;
      figures.byHandRequests += byHandCounts.requests;
      figures.byHandResults += byHandCounts.results;
    }
    return figures;
  } finally {
    await proxy.close();
    await stack.stop();
    await rm(workDir, { recursive: true, force: true });
  }
}

export function formatOptimizeStack(f: OptimizeStackFigures): string {
  const ok = (pass: boolean) => (pass ? 'ok' : 'MISSED');
  const optimizeMs = f.pairs.reduce((sum, pair) => sum + pair.optimizeMs, 0);
  const byHandMs = f.pairs.reduce((sum, pair) => sum + pair.byHandMs, 0);
  const ratio = optimizeMs / byHandMs;
  const perRound = f.optimizeRequests / f.rounds;
  const resultsPerRound = f.results / f.rounds;
  const allowed = 5 + (2 * resultsPerRound) / 100;
  return [
    `optimize --per-change on ${CASES} cases, ${f.pairs.length} runs alternating with the same rounds by hand (synthesize --wait, evaluate --per-change): ${f.rounds} rounds in all`,
    ...f.pairs.map(
      (pair, index) =>
        `  pair ${index + 1}: optimize ${pair.optimizeMs.toFixed(0)} ms, by hand ${pair.byHandMs.toFixed(0)} ms (${(pair.optimizeMs / pair.byHandMs).toFixed(2)}×)`,
    ),
    `optimize ${optimizeMs.toFixed(0)} ms vs by hand ${byHandMs.toFixed(0)} ms: ${ratio.toFixed(2)}× (target ≤ 1.2×) ${ok(ratio <= 1.2)}`,
    `API requests per round: optimize ${perRound.toFixed(1)} for ${resultsPerRound.toFixed(0)} results (target ≤ 5 + 2 per 100 results = ${allowed.toFixed(1)}) ${ok(perRound <= allowed)}; by hand ${(f.byHandRequests / f.rounds).toFixed(1)} for ${(f.byHandResults / f.rounds).toFixed(0)} results`,
  ].join('\n');
}
