/*
 * OpenFeature's Remote Evaluation Protocol (OFREP) as this API speaks it: a pipeline is a flag (its
 * key the pipeline id), a configuration is a variant (its id the variant), the request a context.
 */
import * as z from 'zod/mini';
import { idSchema } from './common.ts';
import { routingKeySchema, slotSchema } from './pipelines.ts';

/**
 * The evaluation context: the targeting key is the routing key of serving (the same arm for the
 * same key); any other attribute is allowed and, today, not used.
 */
export const ofrepContextSchema = /* @__PURE__ */ z.looseObject({
  targetingKey: /* @__PURE__ */ z.optional(routingKeySchema),
});

export const ofrepRequestSchema = /* @__PURE__ */ z.object({ context: ofrepContextSchema });

/** The arms of a rollout, as every user-visible place names them: base (what runs now) and candidate. */
export const armSchema = /* @__PURE__ */ z.enum(['base', 'candidate']);
export type Arm = z.infer<typeof armSchema>;

export const ofrepEvaluationSchema = /* @__PURE__ */ z.object({
  key: /* @__PURE__ */ z.string(),
  /** The configuration itself: what the pipeline runs. */
  value: /* @__PURE__ */ z.object({
    configurationId: idSchema,
    version: /* @__PURE__ */ z.number(),
    slots: /* @__PURE__ */ z.array(slotSchema),
  }),
  /** The configuration id: what OpenFeature's telemetry records as the variant. */
  variant: idSchema,
  /** STATIC outside a rollout; SPLIT inside one (the arm came from the targeting key's hash). */
  reason: /* @__PURE__ */ z.enum(['STATIC', 'SPLIT']),
  /** Strings, numbers and booleans only, as OFREP requires: no rolloutId outside a rollout. */
  metadata: /* @__PURE__ */ z.object({
    rolloutId: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
    arm: armSchema,
    version: /* @__PURE__ */ z.number(),
  }),
});
export type OfrepEvaluation = z.infer<typeof ofrepEvaluationSchema>;

export const ofrepBulkSchema = /* @__PURE__ */ z.object({
  flags: /* @__PURE__ */ z.array(ofrepEvaluationSchema),
});
export type OfrepBulk = z.infer<typeof ofrepBulkSchema>;
