/**
 * Time from `npm start` to its "ready" line, as a user waits for it (install excluded). Target ≤ 5 s.
 */
import { spawn } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '../lib/bundling.ts';

async function startOnce(): Promise<number> {
  const stateDir = await mkdtemp(path.join(tmpdir(), 'pipeline-synthesis-start-'));
  const started = performance.now();
  const child = spawn('npm', ['start', '--silent'], {
    cwd: REPO_ROOT,
    detached: true,
    env: { ...process.env, PORT: '0', LOCAL_STATE_DIR: stateDir, QUIET: '1' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const readyMs = await new Promise<number>((resolve, reject) => {
    let output = '';
    child.stdout?.on('data', (chunk) => {
      output += chunk;
      if (output.includes('ready in')) resolve(performance.now() - started);
    });
    child.once('exit', () => reject(new Error(`npm start exited before it was ready:\n${output}`)));
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  process.kill(-(child.pid as number), 'SIGINT');
  await exited;
  return readyMs;
}

/** Median of `runs` cold starts of `npm start`. */
export async function measureStartTime(runs = 3): Promise<{ medianMs: number; allMs: number[] }> {
  const allMs: number[] = [];
  for (let i = 0; i < runs; i++) allMs.push(await startOnce());
  const sorted = [...allMs].sort((a, b) => a - b);
  return { medianMs: sorted[Math.floor(sorted.length / 2)] ?? Number.NaN, allMs };
}
