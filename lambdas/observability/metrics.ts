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
  /** A run stored and queued (POST …/synthesize), by synthesisHandler; not an Idempotency-Key replay. */
  runsStarted: 'RunsStarted',
  runsGenerated: 'RunsGenerated',
  runsFailed: 'RunsFailed',
  jobRetries: 'SynthesisJobRetries',
  runsSwept: 'RunsSwept',
  /** Milliseconds from the claim to the generated run, by synthesisHandler. */
  generationDuration: 'GenerationDuration',
  /** Model tokens and their cost (usage.costUsd) of runs that called a model, by model. */
  modelInputTokens: 'ModelInputTokens',
  modelOutputTokens: 'ModelOutputTokens',
  modelCostUsd: 'ModelCostUsd',
  /** One per completed pass of the monitors' judge: its alarm fires when it goes missing. */
  monitorJudgeRuns: 'MonitorJudgeRuns',
  /** Monitors judged by a pass, and their changes of state. */
  monitorsJudged: 'MonitorsJudged',
  monitorStateChanges: 'MonitorStateChanges',
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

/** Values with the same dimensions; Powertools flushes a single-metric set at its first value, so one set each. */
function recordMetrics(
  dimensions: Record<string, string>,
  values: ReadonlyArray<{ name: string; unit: (typeof MetricUnit)[keyof typeof MetricUnit]; value: number }>,
): void {
  for (const { name, unit, value } of values) {
    const single = metrics.singleMetric();
    for (const [key, dimension] of Object.entries(dimensions)) single.addDimension(key, dimension);
    single.addMetric(name, unit, value);
  }
}

/** Duration of a generated run and, for a run that called a model, its tokens and cost. */
export function recordRunFigures(run: {
  synthesisHandler: string;
  status: string;
  generationStartedAt: string | null;
  generationCompletedAt: string | null;
  usage?: { model: string; inputTokens: number; outputTokens: number; costUsd?: number | null } | null;
}): void {
  if (run.status === 'generated' && run.generationStartedAt && run.generationCompletedAt) {
    const ms = Date.parse(run.generationCompletedAt) - Date.parse(run.generationStartedAt);
    if (Number.isFinite(ms) && ms >= 0) {
      recordMetrics({ synthesisHandler: run.synthesisHandler }, [
        { name: METRIC.generationDuration, unit: MetricUnit.Milliseconds, value: ms },
      ]);
    }
  }
  const { usage } = run;
  if (!usage) return;
  recordMetrics({ model: usage.model }, [
    { name: METRIC.modelInputTokens, unit: MetricUnit.Count, value: usage.inputTokens },
    { name: METRIC.modelOutputTokens, unit: MetricUnit.Count, value: usage.outputTokens },
    ...(typeof usage.costUsd === 'number'
      ? [{ name: METRIC.modelCostUsd, unit: MetricUnit.NoUnit, value: usage.costUsd }]
      : []),
  ]);
}
