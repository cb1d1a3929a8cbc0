/*
 * Rollouts and their measured effect: a candidate served to part of a pipeline's traffic, how a
 * rollout serves and judges it, and the effect of an approval measured on two arms.
 */
import * as z from 'zod/mini';
import { boundedInt, idSchema, MESSAGE_LENGTH, timestampSchema, trimmedString } from './common.ts';

/** A candidate served to part of a pipeline's traffic, judged by its guardrails until it is promoted or rolled back. */
export const rolloutSchema = /* @__PURE__ */ z.object({
  id: idSchema,
  pipelineId: idSchema,
  synthesisRunId: /* @__PURE__ */ z.string(),
  baseConfigurationId: idSchema,
  candidateConfigurationId: idSchema,
  percent: /* @__PURE__ */ boundedInt(1, 99),
  minExecutions: /* @__PURE__ */ boundedInt(30, 100_000),
  autoPromote: /* @__PURE__ */ z.boolean(),
  autoRollback: /* @__PURE__ */ z.boolean(),
  status: /* @__PURE__ */ z.enum(['active', 'promoted', 'rolled_back']),
  startedAt: timestampSchema,
  startedBy: /* @__PURE__ */ z.string(),
  endedAt: /* @__PURE__ */ z.nullable(timestampSchema),
  /** A user id, or "system" when a guardrail ended it. */
  endedBy: /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.string()),
  endReason: /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.string()),
});
export type Rollout = z.infer<typeof rolloutSchema>;

/** How a rollout serves and judges its candidate. */
export const rolloutSettingsSchema = /* @__PURE__ */ z.strictObject({
  percent: /* @__PURE__ */ boundedInt(1, 99),
  minExecutions: /* @__PURE__ */ z.optional(/* @__PURE__ */ boundedInt(30, 100_000)),
  autoPromote: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.boolean()),
  autoRollback: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.boolean()),
});
export type RolloutSettings = z.infer<typeof rolloutSettingsSchema>;

export const endRolloutBodySchema = /* @__PURE__ */ z.strictObject({
  reason: /* @__PURE__ */ z.optional(/* @__PURE__ */ trimmedString(1, MESSAGE_LENGTH)),
});

const durationsSchema = /* @__PURE__ */ z.nullable(
  /* @__PURE__ */ z.object({ p50: /* @__PURE__ */ z.number(), p95: /* @__PURE__ */ z.number() }),
);
const slotArmSchema = /* @__PURE__ */ z.object({
  executions: /* @__PURE__ */ z.int(),
  failed: /* @__PURE__ */ z.int(),
  failureRate: /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.number()),
  durationMs: durationsSchema,
});
const armSchema = /* @__PURE__ */ (() =>
  z.object({
    ...slotArmSchema.shape,
    signals: z.object({ info: z.int(), warning: z.int(), critical: z.int() }),
    from: z.nullable(timestampSchema),
    to: z.nullable(timestampSchema),
  }))();

export type Effect = z.infer<typeof effectSchema>;
export const effectSchema = /* @__PURE__ */ z.object({
  runId: /* @__PURE__ */ z.string(),
  mode: /* @__PURE__ */ z.enum(['rollout', 'before_after']),
  rolloutId: /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.string()),
  baseConfigurationId: /* @__PURE__ */ z.string(),
  appliedConfigurationId: /* @__PURE__ */ z.string(),
  arms: /* @__PURE__ */ z.object({ base: armSchema, applied: armSchema }),
  slots: /* @__PURE__ */ z.array(
    /* @__PURE__ */ z.object({
      slotId: /* @__PURE__ */ z.string(),
      base: slotArmSchema,
      applied: slotArmSchema,
    }),
  ),
  /** Applied minus base; null while an arm has no execution. */
  failureRate: /* @__PURE__ */ z.nullable(
    /* @__PURE__ */ z.object({
      difference: /* @__PURE__ */ z.number(),
      ci95: /* @__PURE__ */ z.tuple([/* @__PURE__ */ z.number(), /* @__PURE__ */ z.number()]),
      pValue: /* @__PURE__ */ z.number(),
    }),
  ),
  verdict: /* @__PURE__ */ z.enum(['improved', 'worse', 'no_significant_change', 'not_enough_data']),
  minExecutions: /* @__PURE__ */ z.int(),
  measuredAt: timestampSchema,
});
