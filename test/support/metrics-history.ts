/*
 * A pipeline with three hours of history at known times, for the charts' browser test, the CLI's
 * `metrics` test and `npm run screenshots`: version 1 ran the two hours before the last one, a
 * heuristic-v1 run was approved (an activation, now) and version 2 ran the last full hour; every
 * figure a bucket should hold is answered beside it.
 */
import { type Call, generatedRun } from './guarded-rollout.ts';

const HOUR_MS = 3_600_000;

/** What an hour of the history holds, as its table row should say it. */
export interface HistoryHour {
  at: string;
  version: 1 | 2;
  executions: number;
  failed: number;
  /** The nearest-rank p95 of its durations (ms). */
  p95: number;
  /** Input + output tokens per execution. */
  tokensPerExecution: number;
  /** The relevance scores' count and mean, when the hour has any. */
  relevance?: { count: number; mean: number };
}

export interface MetricsHistory {
  pipelineId: string;
  hours: HistoryHour[];
  /** The configurations of versions 1 and 2. */
  configurations: [string, string];
}

interface HourPlan {
  version: 1 | 2;
  durations: number[];
  failed: number;
  relevance: number[];
}

/** Oldest first: three, two and one hour before the current one. */
const PLAN: HourPlan[] = [
  { version: 1, durations: [100, 200, 300, 400, 500, 600, 700, 800, 900, 1_000], failed: 2, relevance: [] },
  {
    version: 1,
    durations: [200, 200, 200, 220, 240, 260, 280, 300],
    failed: 0,
    relevance: [0.4, 0.5, 0.6, 0.5],
  },
  { version: 2, durations: [300, 320, 340, 360, 1_200], failed: 1, relevance: [0.9, 0.8] },
];
const INPUT_TOKENS = 100;
const OUTPUT_TOKENS = 20;

const nearestRank = (values: number[], share: number) =>
  [...values].sort((a, b) => a - b)[Math.ceil(share * values.length) - 1] ?? 0;

/** Makes the pipeline, approves version 2 and records the three hours; what each hour should show. */
export async function metricsHistory(call: Call, name: string, now = Date.now()): Promise<MetricsHistory> {
  const { pipeline, run } = await generatedRun(call, name);
  const first = pipeline.activeConfigurationId as string;
  const second = run.proposedConfigurationId as string;
  await call('POST', `synthesis-runs/${run.id}/approve`, {});
  const currentHour = Math.floor(now / HOUR_MS) * HOUR_MS;
  const hours: HistoryHour[] = [];
  for (const [index, plan] of PLAN.entries()) {
    const hour = currentHour - (PLAN.length - index) * HOUR_MS;
    const prefix = `h${index}`;
    await call('POST', `pipelines/${pipeline.id}/executions`, {
      executions: plan.durations.map((durationMs, i) => ({
        id: `${prefix}-${i}`,
        configurationId: plan.version === 1 ? first : second,
        status: i < plan.failed ? 'failed' : 'succeeded',
        durationMs,
        startedAt: new Date(hour + (5 + i) * 60_000).toISOString(),
        slotResults: [
          {
            slotId: 'answer-model',
            status: 'succeeded',
            durationMs,
            inputTokens: INPUT_TOKENS,
            outputTokens: OUTPUT_TOKENS,
          },
        ],
      })),
    });
    if (plan.relevance.length > 0)
      await call('POST', `pipelines/${pipeline.id}/signals`, {
        signals: plan.relevance.map((value, i) => ({
          kind: 'relevance',
          severity: 'info',
          message: `Relevance of ${prefix}-${i}`,
          executionId: `${prefix}-${i}`,
          value,
          occurredAt: new Date(hour + (30 + i) * 60_000).toISOString(),
        })),
      });
    hours.push({
      at: new Date(hour).toISOString(),
      version: plan.version,
      executions: plan.durations.length,
      failed: plan.failed,
      p95: nearestRank(plan.durations, 0.95),
      tokensPerExecution: INPUT_TOKENS + OUTPUT_TOKENS,
      ...(plan.relevance.length > 0
        ? {
            relevance: {
              count: plan.relevance.length,
              mean: plan.relevance.reduce((sum, value) => sum + value, 0) / plan.relevance.length,
            },
          }
        : {}),
    });
  }
  return { pipelineId: pipeline.id, hours, configurations: [first, second] };
}
