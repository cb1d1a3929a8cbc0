/**
 * `metrics` for people: per series, a sparkline per column (▁▂▃▄▅▆▇█, a blank where a bucket has
 * no figure) above the table of its buckets, then the activations and rollouts of the range.
 * Pure, tested in test/unit/cli; `--json` prints the API's answer instead.
 */
import type { MetricsAnswer } from '../lambdas/core/schemas/metrics.ts';
import { table } from './render.ts';

type Bucket = MetricsAnswer['series'][number]['buckets'][number];

const BARS = '▁▂▃▄▅▆▇█';
/** The widest a sparkline is drawn; more buckets are averaged into this many characters. */
export const SPARKLINE_WIDTH = 48;

/**
 * Values as bars from 0 (▁) to the largest (█); null is a blank (no executions is no rate, not 0).
 * More than `width` values are taken in groups, each the mean of the figures it has.
 */
export function sparkline(values: ReadonlyArray<number | null>, width = SPARKLINE_WIDTH): string {
  const groups = Math.min(values.length, width);
  const merged = Array.from({ length: groups }, (_, index) => {
    const part = values
      .slice(Math.floor((index * values.length) / groups), Math.floor(((index + 1) * values.length) / groups))
      .filter((value): value is number => value !== null && Number.isFinite(value));
    return part.length === 0 ? null : part.reduce((sum, value) => sum + value, 0) / part.length;
  });
  const max = Math.max(0, ...merged.filter((value): value is number => value !== null));
  return merged
    .map((value) => {
      if (value === null) return ' ';
      if (max === 0) return BARS[0];
      return BARS[Math.min(BARS.length - 1, Math.floor((Math.max(0, value) / max) * BARS.length))];
    })
    .join('');
}

interface Column {
  name: string;
  score?: true;
  value(bucket: Bucket): number | null;
  text(value: number): string;
}

const fixed = (digits: number) => (value: number) => value.toFixed(digits);
const whole = (value: number) => String(Math.round(value));

/** The columns: counts, the failure rate, p95 duration, tokens, signals, then each score kind's mean. */
function columnsOf(answer: MetricsAnswer): Column[] {
  const kinds = new Set<string>();
  for (const series of answer.series)
    for (const bucket of series.buckets)
      for (const [kind, score] of Object.entries(bucket.scores)) if (score.count > 0) kinds.add(kind);
  return [
    { name: 'executions', value: (b) => b.executions, text: whole },
    { name: 'failed', value: (b) => b.failed, text: whole },
    {
      name: 'failure_rate',
      value: (b) => b.failureRate,
      text: (value) => `${(value * 100).toFixed(2)}%`,
    },
    { name: 'p95_ms', value: (b) => b.durationMs.p95, text: whole },
    { name: 'tokens', value: (b) => b.tokens.input + b.tokens.output, text: whole },
    {
      name: 'signals',
      value: (b) => b.signals.info + b.signals.warning + b.signals.critical,
      text: whole,
    },
    ...[...kinds].sort().map((kind) => ({
      name: kind,
      value: (b: Bucket) => b.scores[kind]?.mean ?? null,
      text: fixed(3),
      score: true as const,
    })),
  ];
}

const recorded = (bucket: Bucket) =>
  bucket.executions > 0 ||
  bucket.signals.info + bucket.signals.warning + bucket.signals.critical > 0 ||
  Object.values(bucket.scores).some((score) => score.count > 0);

/** A bucket's start as the table writes it: "2026-12-03 14:00" (UTC), days without the time. */
export function bucketLabel(at: string, step: MetricsAnswer['step']): string {
  const text = at.replace('T', ' ');
  return step === 'day' ? text.slice(0, 10) : text.slice(0, 16);
}

/** One series: its sparklines, one a column, then the table of its buckets that hold records. */
function renderSeries(answer: MetricsAnswer, series: MetricsAnswer['series'][number], all: Column[]) {
  // Scores are the pipeline's (signals name no configuration): a configuration's series has none.
  const columns = all.filter(
    (column) => !column.score || series.buckets.some((bucket) => column.value(bucket) !== null),
  );
  const width = Math.max(...columns.map((column) => column.name.length));
  const sparks = columns
    .filter((column) => column.name !== 'failed')
    .map((column) => `${column.name.padEnd(width)}  ${sparkline(series.buckets.map(column.value))}`);
  const rows = series.buckets.filter(recorded).map((bucket) => {
    const row: Record<string, string> = { at: bucketLabel(bucket.at, answer.step) };
    for (const column of columns) {
      const value = column.value(bucket);
      row[column.name] = value === null ? '-' : column.text(value);
    }
    return row;
  });
  const left = series.buckets.length - rows.length;
  const note = left > 0 ? `\n(${left} ${answer.step}${left === 1 ? '' : 's'} without records left out)` : '';
  return [...sparks, '', table(rows, ['at', ...columns.map((column) => column.name)]) + note].join('\n');
}

/** The series' heading: the whole pipeline, or a configuration with its version when an annotation names it. */
function seriesTitle(series: MetricsAnswer['series'][number], versions: ReadonlyMap<string, number>) {
  if (!series.configurationId) return 'All executions';
  const version = versions.get(series.configurationId);
  return `Configuration ${series.configurationId}${version === undefined ? '' : ` (version ${version})`}`;
}

/** The whole answer for a terminal. */
export function renderMetrics(answer: MetricsAnswer): string {
  const columns = columnsOf(answer);
  const versions = new Map(answer.annotations.map((note) => [note.configurationId, note.version]));
  const head = `By ${answer.step}, ${bucketLabel(answer.from, 'minute')} to ${bucketLabel(answer.to, 'minute')} UTC; sparklines from 0 (▁) to each column's largest (█), a blank where a bucket has none.`;
  const parts = [head];
  for (const series of answer.series) {
    parts.push('', `${seriesTitle(series, versions)}:`, renderSeries(answer, series, columns));
  }
  if (answer.series.length === 0) parts.push('', '(no series)');
  if (answer.annotations.length > 0) {
    parts.push('', 'Changes:');
    const sorted = [...answer.annotations].sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
    for (const note of sorted)
      parts.push(
        `  ${bucketLabel(note.at, 'minute')}  ${note.label} (by ${note.byName ?? note.by ?? 'the system'})`,
      );
  }
  return parts.join('\n');
}
