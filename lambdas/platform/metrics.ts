/**
 * Business and fault metrics in CloudWatch's embedded metric format (Powertools Metrics): one JSON
 * line per flush on stdout, which Lambda ships to CloudWatch Logs and CloudWatch turns into metrics
 * without an API call. lib/ builds its alarms and dashboard on these names.
 */
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';

export const METRICS_NAMESPACE = 'PipelineSynthesis';

/** The metric names, shared with the CDK alarms (lib/) so the two cannot drift. */
export const METRIC = {
  /** Every job record that did not end `generated`: permanent failures and retries alike. */
  jobErrors: 'SynthesisJobErrors',
  runsGenerated: 'RunsGenerated',
  runsFailed: 'RunsFailed',
  jobRetries: 'SynthesisJobRetries',
  runsSwept: 'RunsSwept',
} as const;

const metrics = new Metrics({
  namespace: METRICS_NAMESPACE,
  serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'pipeline-synthesis-api',
});

/** Adds `value` to a count, with extra dimensions, as a metric set of its own flushed at once. */
export function countMetric(name: string, dimensions: Record<string, string> = {}, value = 1): void {
  const single = metrics.singleMetric();
  for (const [key, dimension] of Object.entries(dimensions)) single.addDimension(key, dimension);
  single.addMetric(name, MetricUnit.Count, value);
}
