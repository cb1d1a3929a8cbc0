/*
 * A pipeline's monitors: a metric of its series over a trailing window, compared with a threshold,
 * judged every minute (core/use-cases/monitor-judge.ts) into ok, alert or no_data.
 */
import * as z from 'zod/mini';
import { idSchema, slotKindSchema, timestampSchema } from './common.ts';

/** At most this many monitors a pipeline: the judge reads each one's window every minute. */
export const MAX_MONITORS_PER_PIPELINE = 50;
export const MONITOR_NAME_LENGTH = 100;
export const MIN_WINDOW_MINUTES = 5;
export const MAX_WINDOW_MINUTES = 1_440;
export const MAX_MIN_EXECUTIONS = 1_000_000;
/** A threshold's magnitude: beyond any duration, token count or score a bucket can hold. */
export const MAX_THRESHOLD = 1e12;

export const MONITOR_METRICS = [
  'failure_rate',
  'duration_p95',
  'duration_mean',
  'tokens_mean',
  'signal_mean',
  'executions',
] as const;
export const monitorMetricSchema = /* @__PURE__ */ z.enum(MONITOR_METRICS);
export type MonitorMetric = z.infer<typeof monitorMetricSchema>;

export const comparatorSchema = /* @__PURE__ */ z.enum(['above', 'below']);
export const MONITOR_STATES = ['ok', 'alert', 'no_data'] as const;
export const monitorStateSchema = /* @__PURE__ */ z.enum(MONITOR_STATES);
export type MonitorState = z.infer<typeof monitorStateSchema>;

/** What each metric's value is measured in (the app and the Slack text show it). */
export const METRIC_UNITS: Record<MonitorMetric, string> = {
  failure_rate: 'ratio 0–1',
  duration_p95: 'ms',
  duration_mean: 'ms',
  tokens_mean: 'tokens per execution',
  signal_mean: "the kind's score",
  executions: 'executions',
};

const nameSchema = /* @__PURE__ */ z
  .string()
  .check(/* @__PURE__ */ z.minLength(1), /* @__PURE__ */ z.maxLength(MONITOR_NAME_LENGTH));
const thresholdSchema = /* @__PURE__ */ z
  .number()
  .check(/* @__PURE__ */ z.gte(-MAX_THRESHOLD), /* @__PURE__ */ z.lte(MAX_THRESHOLD));
const windowSchema = /* @__PURE__ */ z
  .int()
  .check(/* @__PURE__ */ z.gte(MIN_WINDOW_MINUTES), /* @__PURE__ */ z.lte(MAX_WINDOW_MINUTES));
const minExecutionsSchema = /* @__PURE__ */ z
  .int()
  .check(/* @__PURE__ */ z.gte(1), /* @__PURE__ */ z.lte(MAX_MIN_EXECUTIONS));

/** The fields a person sets; `kind` names the signal kind of signal_mean, and only of it. */
const definitionShape = {
  name: nameSchema,
  metric: monitorMetricSchema,
  kind: /* @__PURE__ */ z.optional(slotKindSchema),
  comparator: comparatorSchema,
  threshold: thresholdSchema,
  windowMinutes: windowSchema,
  minExecutions: /* @__PURE__ */ z.optional(minExecutionsSchema),
};

export const createMonitorBodySchema = /* @__PURE__ */ z.object(definitionShape);
export type CreateMonitorBody = z.infer<typeof createMonitorBodySchema>;

/** Any of the fields; `kind: null` removes it (with a metric other than signal_mean). */
export const updateMonitorBodySchema = /* @__PURE__ */ z.object({
  name: /* @__PURE__ */ z.optional(nameSchema),
  metric: /* @__PURE__ */ z.optional(monitorMetricSchema),
  kind: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.nullable(slotKindSchema)),
  comparator: /* @__PURE__ */ z.optional(comparatorSchema),
  threshold: /* @__PURE__ */ z.optional(thresholdSchema),
  windowMinutes: /* @__PURE__ */ z.optional(windowSchema),
  minExecutions: /* @__PURE__ */ z.optional(minExecutionsSchema),
});
export type UpdateMonitorBody = z.infer<typeof updateMonitorBodySchema>;

/** A monitor as the API answers it: its definition and its last judgement. */
export const monitorSchema = /* @__PURE__ */ z.object({
  id: idSchema,
  pipelineId: idSchema,
  name: /* @__PURE__ */ z.string(),
  metric: monitorMetricSchema,
  kind: /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.string()),
  comparator: comparatorSchema,
  threshold: /* @__PURE__ */ z.number(),
  windowMinutes: /* @__PURE__ */ z.number(),
  /** Fewer executions than this in the window is no_data (default 1). */
  minExecutions: /* @__PURE__ */ z.number(),
  state: monitorStateSchema,
  /** When the monitor entered its state (its creation, for a monitor not judged yet). */
  since: timestampSchema,
  /** The value of the last judgement, in the metric's unit; null with no data. */
  lastValue: /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.number()),
  /** The last judgement's time; null before the first. */
  judgedAt: /* @__PURE__ */ z.nullable(timestampSchema),
  createdAt: timestampSchema,
  createdBy: /* @__PURE__ */ z.string(),
  updatedAt: timestampSchema,
});
export type Monitor = z.infer<typeof monitorSchema>;

/** A monitor as stored: the answer's fields, its team, and the number of its state changes. */
export const monitorRecordSchema = /* @__PURE__ */ z.object({
  ...monitorSchema.shape,
  teamId: /* @__PURE__ */ z.string(),
  /** Incremented by each change of state; the judge's write is conditioned on it. */
  stateSeq: /* @__PURE__ */ z.number(),
});
export type MonitorRecord = z.infer<typeof monitorRecordSchema>;

/** The definition's rule the schemas cannot say field by field; the message names what to fix. */
export function definitionProblem(definition: {
  metric: MonitorMetric;
  kind: string | null;
  threshold: number;
}): string | null {
  if (definition.metric === 'signal_mean' && definition.kind === null)
    return 'kind is required with metric signal_mean: name the signal kind whose mean to watch.';
  if (definition.metric !== 'signal_mean' && definition.kind !== null)
    return `kind applies only to metric signal_mean, not ${definition.metric}: leave it out.`;
  if (definition.metric === 'failure_rate' && (definition.threshold < 0 || definition.threshold > 1))
    return 'threshold of failure_rate is a ratio from 0 to 1 (e.g. 0.05 for 5 %).';
  if (
    ['duration_p95', 'duration_mean', 'tokens_mean', 'executions'].includes(definition.metric) &&
    definition.threshold < 0
  )
    return `threshold of ${definition.metric} cannot be negative.`;
  return null;
}
