/** How the effect's guarded metrics are named and their differences written. Pure, tested in test/unit/web. */
import { formatDelta } from '../../lambdas/core/rollouts/guards.ts';
import { formatCount } from './format.ts';
import type { Effect } from './types.ts';

/** A guarded metric of the effect, as the client answers it (a tuple arrives as an array: [low, high]). */
export type Metric = Omit<NonNullable<Effect['metrics']>[number], 'interval'> & {
  interval: readonly number[] | null;
};

/** The metric as people read it: "Failure rate", "Mean duration", "Signal “relevance”". */
export function metricName(metric: Pick<Metric, 'metric' | 'kind'>): string {
  if (metric.metric === 'signal') return `Signal “${metric.kind ?? ''}”`;
  return { failure_rate: 'Failure rate', duration_ms: 'Mean duration', tokens: 'Mean tokens' }[metric.metric];
}

/** A signed difference in the metric's unit: "+1.20 points", "−35 ms", "±0.000" (zero as written). */
export function signedDelta(metric: Pick<Metric, 'metric'>, value: number): string {
  const text = formatDelta(metric, Math.abs(value));
  const zero = !/[1-9]/.test(text.replace(/ .*$/, ''));
  return `${zero ? '±' : value > 0 ? '+' : '−'}${text}`;
}

/** The difference at the threshold, on the worse side: + when lower is better, − when higher is. */
export const thresholdLine = (metric: Pick<Metric, 'direction' | 'threshold'>) =>
  metric.direction === 'lower_is_better' ? metric.threshold : -metric.threshold;

/** One judgement: the candidate's executions then, its step, the difference and its interval. */
export interface Point {
  n: number;
  step: number;
  difference: number;
  low: number;
  high: number;
  /** The worse end at the rollout's 95 % (what a promotion waits on), when the judgement kept it. */
  bound?: number | undefined;
}

/** The sentence that names the chart: what it draws, how many judgements, the latest figures. */
export function chartSummary(metric: Metric, name: string, points: Point[]): string {
  const last = points.at(-1);
  const threshold = `the threshold is ${signedDelta(metric, thresholdLine(metric))}`;
  if (!last) return `${name}, candidate minus base: no interval yet; ${threshold}.`;
  const judgements = points.length === 1 ? 'one judgement' : `${points.length} judgements`;
  const side =
    metric.verdict === 'worse'
      ? 'the whole interval is on the worse side of 0'
      : metric.verdict === 'better'
        ? 'the whole interval is on the better side of 0'
        : metric.verdict === 'non_inferior'
          ? 'its 95 % worst case lies within the threshold'
          : 'its 95 % worst case still reaches past the threshold';
  return (
    `${name}, candidate minus base, over ${judgements} up to ${formatCount(last.n)} candidate executions: ` +
    `now ${signedDelta(metric, last.difference)}, interval ${signedDelta(metric, last.low)} to ` +
    `${signedDelta(metric, last.high)}${last.bound === undefined ? '' : `, at worst ${signedDelta(metric, last.bound)} at 95 %`}; ${threshold}, and ${side}.`
  );
}
