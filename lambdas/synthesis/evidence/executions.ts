/**
 * The runs a synthesis reads: the order every handler numbers them in ([E1] is the newest), the
 * selection a prompt lists for citing, and the percentile of their durations.
 */
import type { Execution } from '../../core/schemas/records.ts';

export const SHOWN_EXECUTIONS_LIMITS = {
  /** Runs listed one per line and numbered [E1], [E2], … for findings to cite. */
  shownRuns: 20,
  /** Of those, at most this many failed runs, then at most `slowRuns` of the slowest others. */
  failedRuns: 12,
  slowRuns: 4,
} as const;

const L = SHOWN_EXECUTIONS_LIMITS;

/** Runs ordered most recent first, then by id (ids are unique), the order every handler numbers them in: [E1] is the newest. */
export function newestFirst(executions: readonly Execution[]): Execution[] {
  return [...executions].sort(
    // Stryker disable next-line EqualityOperator: ids are unique, so a.id never equals b.id.
    (a, b) => Date.parse(b.startedAt) - Date.parse(a.startedAt) || (a.id < b.id ? -1 : 1),
  );
}

/** Nearest-rank percentile of unsorted values; undefined for none. */
export function percentile(values: readonly number[], share: number): number | undefined {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(share * sorted.length) - 1)];
}

/**
 * The runs a prompt lists for citing: the newest failures, the slowest other runs, then the newest
 * of the rest, up to `limit`; returned newest first, the order they are numbered in.
 */
export function selectShownExecutions(
  executions: readonly Execution[],
  limit: number = L.shownRuns,
): Execution[] {
  const ordered = newestFirst(executions);
  const picked = new Set(ordered.filter((execution) => execution.status === 'failed').slice(0, L.failedRuns));
  const slowest = ordered
    .filter((execution) => !picked.has(execution))
    .sort((a, b) => b.durationMs - a.durationMs)
    .slice(0, L.slowRuns);
  for (const execution of slowest) picked.add(execution);
  for (const execution of ordered) if (picked.size < limit) picked.add(execution);
  return ordered.filter((execution) => picked.has(execution)).slice(0, limit);
}
