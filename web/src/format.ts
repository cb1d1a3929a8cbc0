/** How the application writes times, durations and counts. Pure functions, tested in test/unit/web. */

/** `2026-11-22 14:05:09 UTC` style in the reader's locale and time zone. */
export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return date.toLocaleString(undefined, {
    year: 'numeric',
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  });
}

/** 850 ms, 4.2 s, 3 min 5 s, 2 h 4 min. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '—';
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)} s`;
  const totalSeconds = Math.round(ms / 1_000);
  const hours = Math.floor(totalSeconds / 3_600);
  const minutes = Math.floor((totalSeconds % 3_600) / 60);
  const seconds = totalSeconds % 60;
  return hours > 0 ? `${hours} h ${minutes} min` : `${minutes} min ${seconds} s`;
}

/** The time between two timestamps, or undefined when either is missing. */
export function between(from: string | null | undefined, to: string | null | undefined): string | undefined {
  if (!from || !to) return undefined;
  return formatDuration(Date.parse(to) - Date.parse(from));
}

export function formatCount(value: number): string {
  return value.toLocaleString('en-US');
}

/** A settings value as a reviewer reads it: strings as they are, anything else as JSON. */
export function formatValue(value: unknown): string {
  if (value === undefined) return '';
  if (typeof value === 'string') return value;
  return JSON.stringify(value, null, typeof value === 'object' && value !== null ? 2 : undefined);
}

/** Words for a list of ids: "1", "1 and 2", "1, 2 and 3". */
export function listWords(items: readonly string[]): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}
