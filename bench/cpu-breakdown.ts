/**
 * Where a request's CPU goes, by process: the CPU time (user + system, from /proc) each group of
 * processes spent while a load ran, divided by the operations it completed. Linux only (null
 * elsewhere). The local stack's functions run in child processes by default, so the gateway (the
 * stack's own process), the authorizer's and the handler's environments and DynamoDB Local's JVM
 * are each a process of their own, and a poll's cost splits cleanly between them.
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

/** CPU microseconds a process has used so far; 0 once it is gone. */
function cpuMicros(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1_000_000) / CLOCK_TICKS;
  } catch {
    return 0;
  }
}

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

export type ProcessGroups = Record<string, () => number[]>;

/**
 * Runs `load` (which resolves to the operations it completed) and answers the CPU microseconds per
 * operation of each group, whose processes are listed before and after the load (a process that
 * starts during it counts from its start).
 */
export async function cpuPerOperation(
  groups: ProcessGroups,
  load: () => Promise<number>,
): Promise<Record<string, number> | null> {
  if (!existsSync('/proc/self/stat')) return null;
  const before = new Map<number, number>();
  for (const pids of Object.values(groups)) for (const pid of pids()) before.set(pid, cpuMicros(pid));
  const operations = await load();
  const perOperation: Record<string, number> = {};
  for (const [name, pids] of Object.entries(groups)) {
    const used = pids().reduce((sum, pid) => sum + cpuMicros(pid) - (before.get(pid) ?? 0), 0);
    perOperation[name] = used / operations;
  }
  return perOperation;
}
