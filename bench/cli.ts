/**
 * Start time of the `pipeline-synthesis` CLI as a script pays it: `node dist/pipeline-synthesis.cjs
 * --help` (target ≤ 200 ms median) and a `me` call against a local stack on a free port, each a
 * fresh process, median of several.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { buildCli, CLI_BIN } from '../cli/build.ts';
import { startLocalStack } from '../local/stack.ts';

const execFileAsync = promisify(execFile);

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;

async function timed(
  args: string[],
  env: NodeJS.ProcessEnv,
  runs: number,
  script = CLI_BIN,
): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await execFileAsync(process.execPath, [script, ...args], { env });
    times.push(performance.now() - started);
  }
  return median(times);
}

export async function measureCli(
  runs = 11,
): Promise<{ helpMedianMs: number; meMedianMs: number; nodeMedianMs: number }> {
  await buildCli();
  // The baseline: node starting an empty script on this (shared, noisy) machine.
  const nodeMedianMs = await timed(['0'], process.env, runs, '-e');
  const helpMedianMs = await timed(['--help'], process.env, runs);
  const stateDir = await mkdtemp(path.join(tmpdir(), 'pipeline-synthesis-bench-cli-'));
  const stack = await startLocalStack({ port: 0, stateDir, quiet: true });
  try {
    const env = {
      ...process.env,
      PIPELINE_SYNTHESIS_API_URL: stack.apiUrl,
      PIPELINE_SYNTHESIS_API_TOKEN: stack.teams[0]?.apiToken,
    };
    await timed(['me'], env, 1); // warms the authorizer and handler
    return { helpMedianMs, nodeMedianMs, meMedianMs: await timed(['me'], env, runs) };
  } finally {
    await stack.stop();
    await rm(stateDir, { recursive: true, force: true });
  }
}
