/**
 * Time from `npm start` to its "ready" line, as a user waits for it (install excluded; bundles
 * cached after the first run), and where that time went: each phase `npm start` reports with
 * LOG_LEVEL=debug (modules, DynamoDB Local's JVM, password hashing, web app, bundles, tables, seed).
 * Target ≤ 4 s median once installed, ≤ 10 s on a fresh clone.
 *
 *   npx tsx bench/start-time.ts [runs]
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { REPO_ROOT } from '../lib/bundling.ts';

/** One phase of one start: milliseconds since the process began. */
export interface PhaseTiming {
  name: string;
  startMs: number;
  endMs: number;
}

/** The phases of `[local] start phases: name 12 ms (0–12), …; ready 3456 ms`. */
export function parsePhases(line: string): PhaseTiming[] {
  return [...line.matchAll(/([\w-]+) \d+ ms \((-?\d+)–(-?\d+)\)/g)].map((match) => ({
    name: match[1] ?? '',
    startMs: Number(match[2]),
    endMs: Number(match[3]),
  }));
}

async function startOnce(
  extraEnv: Record<string, string> = {},
): Promise<{ readyMs: number; phases: PhaseTiming[] }> {
  const stateDir = await mkdtemp(path.join(tmpdir(), 'pipeline-synthesis-start-'));
  const started = performance.now();
  const child = spawn('npm', ['start', '--silent'], {
    cwd: REPO_ROOT,
    detached: true,
    env: {
      ...process.env,
      PORT: '0',
      LOCAL_STATE_DIR: stateDir,
      QUIET: '1',
      LOG_LEVEL: 'debug',
      ...extraEnv,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // start.ts prints the phases line right before the ready line.
  let output = '';
  const readyMs = await new Promise<number>((resolve, reject) => {
    child.stdout?.on('data', (chunk) => {
      output += chunk;
      if (output.includes('ready in')) resolve(performance.now() - started);
    });
    child.once('exit', () => reject(new Error(`npm start exited before it was ready:\n${output}`)));
  });
  const phasesLine = output.split('\n').find((line) => line.includes('start phases:')) ?? '';
  const exited = new Promise((resolve) => child.once('exit', resolve));
  process.kill(-(child.pid as number), 'SIGINT');
  await exited;
  await rm(stateDir, { recursive: true, force: true });
  return { readyMs, phases: parsePhases(phasesLine) };
}

/**
 * Median of `runs` starts of `npm start`, with every run's phases; first, one start without the
 * functions' bundle cache, as on a fresh clone (after `npm install`), which builds it again.
 */
export async function measureStartTime(runs = 3): Promise<{
  medianMs: number;
  allMs: number[];
  phases: PhaseTiming[][];
  fresh: { readyMs: number; phases: PhaseTiming[] };
}> {
  // An empty bundle cache of its own: the repository's stays as it is for a stack running meanwhile.
  const emptyCache = await mkdtemp(path.join(tmpdir(), 'pipeline-synthesis-bundles-'));
  const fresh = await startOnce({ LOCAL_BUNDLE_CACHE: emptyCache }).finally(() =>
    rm(emptyCache, { recursive: true, force: true }),
  );
  const allMs: number[] = [];
  const phases: PhaseTiming[][] = [];
  for (let i = 0; i < runs; i++) {
    const run = await startOnce();
    allMs.push(run.readyMs);
    phases.push(run.phases);
  }
  return { medianMs: median(allMs), allMs, phases, fresh };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

/** Per phase: the median duration and median end over the runs, in the order the phases end. */
export function formatPhaseMedians(runs: readonly PhaseTiming[][]): string {
  const names = [...new Set(runs.flat().map((phase) => phase.name))];
  const rows = names.map((name) => {
    const mine = runs.flatMap((run) => run.filter((phase) => phase.name === name));
    return {
      name,
      durationMs: median(mine.map((phase) => phase.endMs - phase.startMs)),
      endMs: median(mine.map((phase) => phase.endMs)),
    };
  });
  return rows
    .sort((a, b) => a.endMs - b.endMs)
    .map(
      (row) =>
        `  ${row.name.padEnd(10)} ${row.durationMs.toFixed(0).padStart(6)} ms, ends at ${row.endMs.toFixed(0)} ms`,
    )
    .join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const result = await measureStartTime(Number(process.argv[2] ?? 3));
  console.log(
    `ready in ${result.medianMs.toFixed(0)} ms median of ${result.allMs.map((ms) => ms.toFixed(0)).join(', ')}`,
  );
  console.log(formatPhaseMedians(result.phases));
  console.log(`without the bundle cache (a fresh clone): ready in ${result.fresh.readyMs.toFixed(0)} ms`);
}
