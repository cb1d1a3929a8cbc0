/**
 * The run history as prompt text: failure rates, latency percentiles and error kinds, overall and
 * per slot; and the shown runs one per line, numbered [E1], [E2], … for findings to cite. Every
 * text from the pipeline is written through escapePromptData.
 */

import type { Slot } from '../../core/schemas/pipelines.ts';
import type { Execution } from '../../core/schemas/records.ts';
import { escapePromptData, promptJson } from '../prompt-escape.ts';
import { redactSettings, redactText } from '../redact.ts';
import { byteLength, shorten } from '../text-budget.ts';
import { percentile, selectShownExecutions } from './executions.ts';

export const HISTORY_SUMMARY_LIMITS = {
  runErrorBytes: 100,
  /** A run's recorded input, redacted and shortened: enough to see what it was asked. */
  runInputBytes: 200,
  errorKindsPerSlot: 3,
  errorKindBytes: 100,
  slotIdBytes: 64,
} as const;

const L = HISTORY_SUMMARY_LIMITS;

interface Stats {
  runs: number;
  failures: number;
  durations: number[];
  errors: Map<string, number>;
}

const emptyStats = (): Stats => ({ runs: 0, failures: 0, durations: [], errors: new Map() });

/**
 * The kind of an error: its message with numbers, ids and quoted values blanked, so "timed out
 * after 1500 ms (query 3)" and "… (query 4)" count as one kind.
 */
export function errorKind(message: string): string {
  const normalized = redactText(message)
    .replace(/"[^"]*"|'[^']*'/g, '"…"')
    .replace(/\b[0-9a-f]{8}-[0-9a-f-]{27,}\b/gi, '<id>')
    .replace(/\d+(\.\d+)?/g, '#')
    .replace(/\s+/g, ' ')
    .trim();
  return shorten(normalized === '' ? '(no message)' : normalized, L.errorKindBytes);
}

// Both are only given stats with at least one run, so `whole` and `durations` are never empty.
const rate = (part: number, whole: number): string =>
  `${(Math.round((part / whole) * 1000) / 10).toString()}%`;

function latency(durations: readonly number[]): string {
  const [p50, p90, p99] = [0.5, 0.9, 0.99].map((share) => percentile(durations, share));
  return `p50 ${p50} ms, p90 ${p90} ms, p99 ${p99} ms`;
}

function topErrors(errors: ReadonlyMap<string, number>): string {
  if (errors.size === 0) return '';
  // Stryker disable next-line EqualityOperator: kinds are the keys of a map, so no two are equal.
  const ranked = [...errors.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  const shown = ranked.slice(0, L.errorKindsPerSlot).map(([kind, count]) => `${promptJson(kind)} ×${count}`);
  const more = ranked.length - shown.length;
  return `; errors: ${shown.join(', ')}${more > 0 ? ` and ${more} other kind${more === 1 ? '' : 's'}` : ''}`;
}

function addError(stats: Stats, message: string | undefined): void {
  const kind = errorKind(message ?? '');
  stats.errors.set(kind, (stats.errors.get(kind) ?? 0) + 1);
}

/**
 * Renders the history section of a prompt within `maxBytes`; the most failing slots come first. Its
 * size depends on the number of slots, never on the number of runs, and is capped on top of that.
 */
export function summarizeHistory(
  executions: readonly Execution[],
  slots: readonly Slot[],
  baseConfigurationId: string,
  maxBytes: number,
): string {
  if (executions.length === 0) return 'No runs were reported.';

  const overall = emptyStats();
  const unattributed = emptyStats();
  const bySlot = new Map<string, Stats>(slots.map((slot) => [slot.id, emptyStats()]));
  const unknownSlots = new Set<string>();
  let otherConfiguration = 0;
  for (const execution of executions) {
    overall.runs += 1;
    overall.durations.push(execution.durationMs);
    if (execution.configurationId !== baseConfigurationId) otherConfiguration += 1;
    let failedInSlot = false;
    for (const result of execution.slotResults ?? []) {
      const stats = bySlot.get(result.slotId);
      if (stats === undefined) {
        unknownSlots.add(result.slotId);
        continue;
      }
      stats.runs += 1;
      stats.durations.push(result.durationMs);
      if (result.status === 'failed') {
        stats.failures += 1;
        failedInSlot = true;
        addError(stats, result.error);
      }
    }
    if (execution.status === 'failed') {
      overall.failures += 1;
      addError(overall, execution.error);
      if (!failedInSlot) {
        unattributed.failures += 1;
        addError(unattributed, execution.error);
      }
    }
  }

  const times = executions.map((execution) => execution.startedAt).sort();
  const head = [
    `The ${executions.length} most recent runs (${escapePromptData(`${times[0]} to ${times.at(-1)}`)}): ` +
      `${overall.failures} failed (${rate(overall.failures, overall.runs)}); ${latency(overall.durations)}${topErrors(overall.errors)}.`,
  ];
  if (otherConfiguration > 0) {
    head.push(`${otherConfiguration} of them ran another configuration than the base one.`);
  }

  const slotLines = [...bySlot.entries()]
    .filter(([, stats]) => stats.runs > 0)
    .sort((a, b) => b[1].failures - a[1].failures || b[1].runs - a[1].runs)
    .map(
      ([slotId, stats]) =>
        `- slot ${promptJson(slotId)}: ${stats.runs} runs, ${stats.failures} failed (${rate(stats.failures, stats.runs)}); ` +
        `${latency(stats.durations)}${topErrors(stats.errors)}`,
    );
  const silent = [...bySlot].filter(([, stats]) => stats.runs === 0).map(([slotId]) => promptJson(slotId));
  const tail: string[] = [];
  if (unattributed.failures > 0) {
    tail.push(
      `- failed runs naming no failed slot: ${unattributed.failures}${topErrors(unattributed.errors)}`,
    );
  }
  if (silent.length > 0) tail.push(`- slots no run reported results for: ${silent.join(', ')}`);
  if (unknownSlots.size > 0) {
    const named = [...unknownSlots.keys()].slice(0, 5).map((id) => promptJson(shorten(id, L.slotIdBytes)));
    tail.push(
      `- results for ${unknownSlots.size} slot${unknownSlots.size === 1 ? '' : 's'} not in the base configuration ` +
        `(${named.join(', ')}${unknownSlots.size > named.length ? ', …' : ''}) were left out`,
    );
  }

  // Lines are added whole while they fit; what does not fit is counted, not cut mid-line.
  const lines: string[] = [];
  let used = 0;
  let omitted = 0;
  const reserve = 80;
  for (const line of [...head, 'Per slot (most failures first):', ...slotLines, ...tail]) {
    const size = byteLength(line) + 1;
    if (used + size > maxBytes - reserve) {
      omitted += 1;
      continue;
    }
    lines.push(line);
    used += size;
  }
  if (omitted > 0) lines.push(`(${omitted} more line${omitted === 1 ? '' : 's'} left out for length)`);
  return shorten(lines.join('\n'), maxBytes);
}

/** One line per shown run, numbered [E1], [E2], …; lines that do not fit end the list, so numbers match `shown`. */
export function renderShownExecutions(
  executions: readonly Execution[],
  baseConfigurationId: string,
  maxBytes: number,
): { text: string; shown: Execution[] } {
  if (executions.length === 0) return { text: 'No runs were reported.', shown: [] };
  const candidates = selectShownExecutions(executions);
  const intro =
    `Showing ${candidates.length} of the ${executions.length} runs read (the newest failures, the slowest ` +
    'others, then the newest), newest first. Cite them by number in executionRefs: [E3] is 3.';
  const lines: string[] = [];
  const shown: Execution[] = [];
  let used = byteLength(intro) + 1;
  for (const execution of candidates) {
    const parts = [
      `[E${shown.length + 1}] ${escapePromptData(execution.startedAt.slice(0, 16))}Z ${escapePromptData(execution.status)} ${execution.durationMs} ms`,
    ];
    if (execution.configurationId !== baseConfigurationId) parts.push('another configuration');
    const failedSlots = (execution.slotResults ?? []).filter((result) => result.status === 'failed');
    for (const result of failedSlots.slice(0, 2)) {
      parts.push(
        `slot ${promptJson(shorten(result.slotId, L.slotIdBytes))} failed: ${promptJson(shorten(redactText(result.error ?? ''), L.runErrorBytes))}`,
      );
    }
    if (failedSlots.length === 0 && execution.status === 'failed') {
      parts.push(`error: ${promptJson(shorten(redactText(execution.error ?? ''), L.runErrorBytes))}`);
    }
    const slowest = [...(execution.slotResults ?? [])].sort((a, b) => b.durationMs - a.durationMs)[0];
    if (slowest !== undefined) {
      parts.push(
        `slowest slot ${promptJson(shorten(slowest.slotId, L.slotIdBytes))} ${slowest.durationMs} ms`,
      );
    }
    if (execution.input !== undefined) {
      // Redacted as settings are (secret-named keys and credential shapes) before it is shortened.
      parts.push(
        `input: ${promptJson(shorten(JSON.stringify(redactSettings(execution.input)), L.runInputBytes))}`,
      );
    }
    const line = parts.join(' | ');
    const size = byteLength(line) + 1;
    if (used + size > maxBytes) break;
    lines.push(line);
    shown.push(execution);
    used += size;
  }
  return { text: [intro, ...lines].join('\n'), shown };
}
