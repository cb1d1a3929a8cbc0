/** How the effect's guarded metrics are named and their differences written. Pure, tested in test/unit/web. */
import { formatDelta } from '../../lambdas/core/rollouts/guards.ts';
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
