/**
 * What the pipeline's charts draw from GET …/metrics, as pure functions tested in test/unit/web: the
 * ranges and the query each asks, each charted metric (its value in a bucket, its unit, its words),
 * the lines (the whole and one per configuration, by version) and the drawing's geometry.
 */

import { formatFigure } from '../../../lambdas/core/rollouts/guards.ts';
import type { Annotation, MetricsAnswer } from '../../../lambdas/core/schemas/metrics.ts';
import { formatCount } from '../format.ts';
import { metricName } from '../metric-format.ts';

export type { Annotation, MetricsAnswer };
export type Bucket = MetricsAnswer['series'][number]['buckets'][number];
type Step = MetricsAnswer['step'];

const HOUR_MS = 3_600_000;
const STEP_MS: Record<Step, number> = { minute: 60_000, hour: HOUR_MS, day: 24 * HOUR_MS };

/**
 * The ranges a person picks. A day is drawn by the hour rather than by the minute: 1,440 minute
 * buckets per line is a heavy answer for a 300-pixel chart, and p95s cannot be merged client-side
 * into coarser buckets; 30 days by the day keeps one point a day (30) where hours would be 720.
 */
export const RANGES = {
  '24h': { label: '24 h', words: 'the last 24 hours', step: 'hour', hours: 24 },
  '7d': { label: '7 d', words: 'the last 7 days', step: 'hour', hours: 7 * 24 },
  '30d': { label: '30 d', words: 'the last 30 days', step: 'day', hours: 30 * 24 },
} as const satisfies Record<string, { label: string; words: string; step: Step; hours: number }>;
export type RangeName = keyof typeof RANGES;

/** The query of a range at `now`: whole steps (UTC), the last one the step now runs in. */
export function rangeQuery(range: RangeName, now: number): { from: string; to: string; step: Step } {
  const { step, hours } = RANGES[range];
  const size = STEP_MS[step];
  const to = Math.floor(now / size) * size + size;
  return { from: new Date(to - hours * HOUR_MS).toISOString(), to: new Date(to).toISOString(), step };
}

/** A charted metric: named as the monitors name theirs (tokens_mean, signal_mean with its kind). */
export interface ChartMetric {
  id: string;
  title: string;
  /** The figure in a bucket, null where the bucket has none (no executions, no scores). */
  value(bucket: Bucket): number | null;
  /** The figure with its unit: "12.50 %", "420 ms", "1,234 tokens", "0.812". */
  format(value: number): string;
  /** What the figure rests on: "2 of 16 failed", "16 executions", "n = 40". */
  basis(bucket: Bucket): string;
}

const executionsWords = (bucket: Bucket) =>
  bucket.executions === 1 ? '1 execution' : `${formatCount(bucket.executions)} executions`;

const FAILURE_RATE: ChartMetric = {
  id: 'failure_rate',
  title: 'Failure rate',
  value: (bucket) => bucket.failureRate,
  format: (value) => formatFigure({ metric: 'failure_rate' }, value),
  basis: (bucket) => `${formatCount(bucket.failed)} of ${formatCount(bucket.executions)} failed`,
};

const DURATION_P95: ChartMetric = {
  id: 'duration_p95',
  title: 'p95 duration',
  value: (bucket) => bucket.durationMs.p95,
  format: (value) => formatFigure({ metric: 'duration_ms' }, value),
  basis: executionsWords,
};

const TOKENS_MEAN: ChartMetric = {
  id: 'tokens_mean',
  title: 'Tokens per execution (input + output)',
  value: (bucket) =>
    bucket.executions > 0 ? (bucket.tokens.input + bucket.tokens.output) / bucket.executions : null,
  format: (value) => `${formatCount(Math.round(value))} tokens`,
  basis: (bucket) =>
    `${formatCount(bucket.tokens.input)} in + ${formatCount(bucket.tokens.output)} out, ${executionsWords(bucket)}`,
};

function scoreMetric(kind: string): ChartMetric {
  return {
    id: `signal_mean:${kind}`,
    title: `${metricName({ metric: 'signal', kind })}, mean`,
    value: (bucket) => bucket.scores[kind]?.mean ?? null,
    format: (value) => formatFigure({ metric: 'signal' }, value),
    basis: (bucket) => `n\u00a0=\u00a0${formatCount(bucket.scores[kind]?.count ?? 0)}`,
  };
}

/** The charts of an answer: failure rate, p95 duration, tokens, then each score kind it holds by name. */
export function chartMetrics(answer: Pick<MetricsAnswer, 'series'>): ChartMetric[] {
  const kinds = new Set<string>();
  for (const series of answer.series)
    for (const bucket of series.buckets)
      for (const [kind, score] of Object.entries(bucket.scores)) if (score.count > 0) kinds.add(kind);
  return [FAILURE_RATE, DURATION_P95, TOKENS_MEAN, ...[...kinds].sort().map(scoreMetric)];
}

/** One line of a chart: its buckets in the whole's order (null where that series has none). */
export interface Line {
  key: string;
  name: string;
  whole: boolean;
  buckets: Array<Bucket | null>;
}

/** A configuration by its version where the page knows it, else by the start of its id. */
export function configurationName(id: string, versions: ReadonlyMap<string, number>): string {
  const version = versions.get(id);
  return version === undefined ? `configuration ${id.slice(0, 8)}` : `version ${version}`;
}

/** The versions the annotations name, beside those the page passes in. */
export function versionsOf(annotations: readonly Annotation[], known: ReadonlyMap<string, number>) {
  const versions = new Map(known);
  // A version the moment did not record is answered as 0: not a name.
  for (const annotation of annotations)
    if (annotation.version > 0) versions.set(annotation.configurationId, annotation.version);
  return versions;
}

/** The answer's whole series: the one naming no configuration. */
export const wholeOf = (answer: Pick<MetricsAnswer, 'series'>) =>
  answer.series.find((series) => series.configurationId === undefined)?.buckets ?? [];

/**
 * The lines of an answer asked with groupBy=configuration: the whole pipeline, then each
 * configuration that ran in the range, oldest version first. With one configuration only the whole
 * is drawn (its line would be the same), named by it.
 */
export function linesOf(
  answer: Pick<MetricsAnswer, 'series'>,
  versions: ReadonlyMap<string, number>,
): Line[] {
  const whole = wholeOf(answer);
  const times = whole.map((bucket) => bucket.at);
  const ran = answer.series.filter(
    (series) => series.configurationId && series.buckets.some((bucket) => bucket.executions > 0),
  );
  const only = ran.length === 1 && ran[0]?.configurationId;
  const lines: Line[] = [
    {
      key: 'whole',
      name: only ? `All executions (${configurationName(only, versions)})` : 'All executions',
      whole: true,
      buckets: whole,
    },
  ];
  if (ran.length < 2) return lines;
  const ordered = [...ran].sort(
    (a, b) =>
      (versions.get(a.configurationId ?? '') ?? Number.MAX_SAFE_INTEGER) -
      (versions.get(b.configurationId ?? '') ?? Number.MAX_SAFE_INTEGER),
  );
  for (const series of ordered) {
    const id = series.configurationId ?? '';
    const byTime = new Map(series.buckets.map((bucket) => [bucket.at, bucket]));
    lines.push({
      key: id,
      name: configurationName(id, versions),
      whole: false,
      buckets: times.map((at) => byTime.get(at) ?? null),
    });
  }
  return lines;
}

/**
 * The lines a chart draws: the whole, and each configuration with a figure of its metric in the
 * range (signals name no configuration, so the score charts have the whole alone).
 */
export const linesWithFigures = (metric: ChartMetric, lines: readonly Line[]) =>
  lines.filter(
    (line) => line.whole || line.buckets.some((bucket) => bucket !== null && metric.value(bucket) !== null),
  );

/** The drawing's own units; the plot inside, the axis labels around it. */
export const BOX = { width: 320, height: 172, left: 8, right: 312, top: 24, bottom: 138 };

/** A round top for the value axis (1, 2, 2.5 or 5 times a power of ten) at or above `max`; 1 for nothing. */
export function niceCeiling(max: number): number {
  if (!(max > 0) || !Number.isFinite(max)) return 1;
  const power = 10 ** Math.floor(Math.log10(max));
  const step = [1, 2, 2.5, 5, 10].find((factor) => factor * power >= max * (1 - 1e-9)) ?? 10;
  return step * power;
}

/** The x of bucket `index` of `count`: the plot's width spread over them, one alone in the middle. */
export function xOf(index: number, count: number): number {
  if (count <= 1) return (BOX.left + BOX.right) / 2;
  return BOX.left + (index / (count - 1)) * (BOX.right - BOX.left);
}

/** The y of a value between 0 and the axis' top. */
export function yOf(value: number, top: number): number {
  const share = Math.min(1, Math.max(0, value / top));
  return BOX.bottom - share * (BOX.bottom - BOX.top);
}

/** The bucket nearest to an x in the drawing's units. */
export function nearestIndex(x: number, count: number): number {
  if (count <= 1) return 0;
  const share = (x - BOX.left) / (BOX.right - BOX.left);
  return Math.min(count - 1, Math.max(0, Math.round(share * (count - 1))));
}

/**
 * A line's polylines ("x,y x,y …"), broken where a bucket has no figure: no executions is no
 * failure rate, not a rate of 0. A figure alone between gaps is a run of one, drawn as a dot.
 */
export function runsOf(values: ReadonlyArray<number | null>, top: number): Array<Array<[number, number]>> {
  const runs: Array<Array<[number, number]>> = [];
  let run: Array<[number, number]> = [];
  values.forEach((value, index) => {
    if (value === null) {
      if (run.length > 0) runs.push(run);
      run = [];
    } else run.push([xOf(index, values.length), yOf(value, top)]);
  });
  if (run.length > 0) runs.push(run);
  return runs;
}

export const pointsText = (run: ReadonlyArray<[number, number]>) =>
  run.map(([x, y]) => `${x.toFixed(1)},${y.toFixed(1)}`).join(' ');

/** Where an annotation falls between the first bucket's start and the last one's, or null outside. */
export function annotationX(at: string, times: readonly string[], step: Step): number | null {
  const first = Date.parse(times[0] ?? '');
  const time = Date.parse(at);
  if (!Number.isFinite(first) || !Number.isFinite(time) || times.length === 0) return null;
  // A bucket's point stands for [at, at + step): the moment sits at its share of the way along.
  const index = (time - first) / STEP_MS[step];
  if (index < 0 || index > times.length) return null;
  const clamped = Math.min(times.length - 1, index);
  return times.length <= 1 ? xOf(0, 1) : BOX.left + (clamped / (times.length - 1)) * (BOX.right - BOX.left);
}

/**
 * The markers' number labels: markers closer than `gap` to the first of their group share one label
 * at its x ("2", "2, 3", "2–4"), so that numbers never print over each other.
 */
export function labelGroups(
  markers: ReadonlyArray<{ number: number; x: number }>,
  gap = 14,
): Array<{ x: number; text: string }> {
  const groups: Array<Array<{ number: number; x: number }>> = [];
  for (const marker of markers) {
    const group = groups.at(-1);
    if (group?.[0] && marker.x - group[0].x < gap) group.push(marker);
    else groups.push([marker]);
  }
  return groups.map((group) => {
    const first = group[0]?.number ?? 0;
    const last = group.at(-1)?.number ?? first;
    const text =
      group.length === 1 ? `${first}` : group.length === 2 ? `${first}, ${last}` : `${first}–${last}`;
    return { x: group[0]?.x ?? 0, text };
  });
}

/** A bucket's time as the axis and the table write it: "Dec 3, 14:00" (hours), "Dec 3" (days). */
export function bucketTime(at: string, step: Step): string {
  const date = new Date(at);
  if (Number.isNaN(date.getTime())) return at;
  return step === 'day'
    ? date.toLocaleDateString('en-US', { month: 'short', day: 'numeric' })
    : date.toLocaleString('en-US', {
        month: 'short',
        day: 'numeric',
        hour: '2-digit',
        minute: '2-digit',
        hourCycle: 'h23',
      });
}

/** A line's figure in a bucket with its unit and what it rests on: "12.50 % (2 of 16 failed)"; "no data". */
export function figureWords(metric: ChartMetric, bucket: Bucket | null | undefined): string {
  const value = bucket ? metric.value(bucket) : null;
  if (!bucket || value === null) return 'no data';
  return `${metric.format(value)} (${metric.basis(bucket)})`;
}

/** The latest bucket where any line has a figure; the last bucket when none has. */
export function latestIndex(metric: ChartMetric, lines: readonly Line[]): number {
  const count = lines[0]?.buckets.length ?? 0;
  for (let index = count - 1; index >= 0; index--)
    if (
      lines.some((line) => {
        const bucket = line.buckets[index];
        return bucket ? metric.value(bucket) !== null : false;
      })
    )
      return index;
  return Math.max(0, count - 1);
}

/** Who made an annotation's change, in words: their name, their id, or "the system". */
export const annotationBy = (annotation: Annotation) => annotation.byName ?? annotation.by ?? 'the system';

/** The sentence that names a chart for assistive technology: what, over when, and where it ends. */
export function chartSummary(metric: ChartMetric, lines: readonly Line[], rangeWords: string): string {
  const latest = lines.map((line) => {
    const index = line.buckets.findLastIndex((bucket) => bucket !== null && metric.value(bucket) !== null);
    const bucket = line.buckets[index];
    return bucket ? `${line.name} last ${figureWords(metric, bucket)}` : `${line.name} has no data`;
  });
  return `${metric.title} over ${rangeWords}, ${lines.length === 1 ? 'one line' : `${lines.length} lines`}: ${latest.join('; ')}. The table below the chart has every figure.`;
}
