/*
 * A pipeline's series over time (GET /pipelines/{pipelineId}/metrics): buckets of a minute, an
 * hour or a day, for the whole pipeline or one series per configuration, and the moments that
 * changed what was served (activations, rollouts) as annotations.
 */
import * as z from 'zod/mini';
import { idSchema, timestampSchema } from './common.ts';

/** The most buckets one answer holds (a day of minutes); a longer range is a 400 naming it. */
export const MAX_BUCKETS = 1_440;

export const stepSchema = /* @__PURE__ */ z.enum(['minute', 'hour', 'day']);

const nullableNumber = /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.number());

export const bucketSchema = /* @__PURE__ */ z.object({
  /** The bucket's start (UTC); it holds executions started and signals that occurred in [at, at + step). */
  at: timestampSchema,
  executions: /* @__PURE__ */ z.number(),
  failed: /* @__PURE__ */ z.number(),
  /** failed / executions (0–1); null without executions. */
  failureRate: nullableNumber,
  /** Milliseconds: the exact mean; percentiles within 2 % (a log-spaced histogram); null without executions. */
  durationMs: /* @__PURE__ */ z.object({
    mean: nullableNumber,
    p50: nullableNumber,
    p95: nullableNumber,
    p99: nullableNumber,
  }),
  /** Tokens of the executions' slots, summed. */
  tokens: /* @__PURE__ */ z.object({ input: /* @__PURE__ */ z.number(), output: /* @__PURE__ */ z.number() }),
  /** Signals that occurred in the bucket, by severity. */
  signals: /* @__PURE__ */ z.object({
    info: /* @__PURE__ */ z.number(),
    warning: /* @__PURE__ */ z.number(),
    critical: /* @__PURE__ */ z.number(),
  }),
  /** Each signal kind with values (scores): how many and their exact mean. */
  scores: /* @__PURE__ */ z.record(
    /* @__PURE__ */ z.string(),
    /* @__PURE__ */ z.object({ count: /* @__PURE__ */ z.number(), mean: nullableNumber }),
  ),
});

export const seriesSchema = /* @__PURE__ */ z.object({
  /** Present with groupBy=configuration: the configuration the executions ran (signals are the pipeline's). */
  configurationId: /* @__PURE__ */ z.optional(idSchema),
  buckets: /* @__PURE__ */ z.array(bucketSchema),
});

export const annotationSchema = /* @__PURE__ */ z.object({
  at: timestampSchema,
  type: /* @__PURE__ */ z.enum(['activation', 'rollout_started', 'rollout_stepped', 'rollout_ended']),
  configurationId: idSchema,
  version: /* @__PURE__ */ z.number(),
  /** Who did it (a user id or an API token's id) and their name; absent when the system did (a sweeper's rollback). */
  by: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
  byName: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
  /** Words for a reader: "Rollout of version 4 moved to 25 %", "rolled back: …". */
  label: /* @__PURE__ */ z.string(),
});

export const metricsAnswerSchema = /* @__PURE__ */ z.object({
  step: stepSchema,
  from: timestampSchema,
  to: timestampSchema,
  series: /* @__PURE__ */ z.array(seriesSchema),
  annotations: /* @__PURE__ */ z.array(annotationSchema),
});

export type MetricsAnswer = z.infer<typeof metricsAnswerSchema>;
export type Annotation = z.infer<typeof annotationSchema>;
