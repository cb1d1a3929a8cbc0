/**
 * Where a request's CPU goes: the CPU time (user + system) each part spent while a load ran,
 * divided by the operations it completed. Linux only (null elsewhere). Processes and threads are
 * read from /proc (the gateway is the stack's main thread, DynamoDB Local its JVM); an execution
 * environment reports its own (its worker thread's, or its child process's), so a poll's cost
 * splits the same way whichever kind of environment the stack runs.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';

/** The clock ticks per second /proc's CPU times count in (`getconf CLK_TCK`; 100 on Linux today). */
const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** CPU microseconds `/proc/<path>/stat` says a process or thread has used so far; 0 once it is gone. */
function statMicros(path: string): number {
  try {
    const stat = readFileSync(`/proc/${path}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1_000_000) / CLOCK_TICKS;
  } catch {
    return 0;
  }
}

/** CPU microseconds the processes have used so far (each with all its threads). */
export const processesCpu =
  (pids: () => number[]): CpuSource =>
  async () =>
    pids().reduce((sum, pid) => sum + statMicros(String(pid)), 0);

/** CPU microseconds one thread of this process has used so far (the main thread: its pid). */
export const threadCpu =
  (tid: number = process.pid): CpuSource =>
  async () =>
    statMicros(`${process.pid}/task/${tid}`);

/** Every process below `root` (children, grandchildren…), with its command line. */
export function descendants(root: number = process.pid): Array<{ pid: number; command: string }> {
  const parents = new Map<number, number>();
  const commands = new Map<number, string>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
      commands.set(Number(entry), readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' '));
    } catch {
      // The process ended while we looked.
    }
  }
  const below = (pid: number): number[] =>
    [...parents].filter(([, parent]) => parent === pid).flatMap(([child]) => [child, ...below(child)]);
  return below(root).map((pid) => ({ pid, command: commands.get(pid) ?? '' }));
}

/**
 * The CPU microseconds a part has used so far, cumulative: a process's or a thread's from /proc,
 * or an execution environment's as its host reports it (LocalFunction.environmentCpuMicros()).
 */
export type CpuSource = () => Promise<number>;

/**
 * Runs `load` (which resolves to the operations it completed) and answers the CPU microseconds per
 * operation of each part, read before and after the load. `rest` names what is left of the
 * stack's process once the parts read inside it (`within`) are taken out: V8's helper threads
 * (garbage collection, compilation), libuv's.
 */
export async function cpuPerOperation(
  parts: Record<string, CpuSource>,
  load: () => Promise<number>,
  options: { rest?: string; within?: readonly string[] } = {},
): Promise<Record<string, number> | null> {
  if (!existsSync('/proc/self/stat')) return null;
  const read = async () => {
    const values: Record<string, number> = {};
    for (const [name, source] of Object.entries(parts)) values[name] = await source();
    if (options.rest) values[options.rest] = await processesCpu(() => [process.pid])();
    return values;
  };
  const before = await read();
  const operations = await load();
  const after = await read();
  const perOperation: Record<string, number> = {};
  for (const name of Object.keys(after))
    perOperation[name] = ((after[name] ?? 0) - (before[name] ?? 0)) / operations;
  if (options.rest) {
    const inside = (options.within ?? []).reduce((sum, name) => sum + (perOperation[name] ?? 0), 0);
    perOperation[options.rest] = Math.max(0, (perOperation[options.rest] ?? 0) - inside);
  }
  return perOperation;
}
