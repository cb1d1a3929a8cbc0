/*
 * Pipelines and their configurations: slots and their settings, the pipeline, a configuration, an
 * activation (one change of the active configuration), and what serving reads.
 */
import * as z from 'zod/mini';
import {
  boundedInt,
  boundedNumber,
  boundedString,
  emptyKeyPath,
  idSchema,
  MESSAGE_LENGTH,
  minInt,
  NAME_LENGTH,
  SETTINGS_BYTES,
  SLOTS_PER_CONFIGURATION,
  shortString,
  slotKindSchema,
  timestampSchema,
  trimmedString,
} from './common.ts';
import { rolloutSchema } from './rollouts.ts';

const jsonObjectSchema = /* @__PURE__ */ z
  .record(/* @__PURE__ */ z.string(), /* @__PURE__ */ z.unknown())
  .check(
    /* @__PURE__ */ z.refine((value) => JSON.stringify(value).length <= SETTINGS_BYTES, {
      error: () => `must serialize to at most ${SETTINGS_BYTES} bytes`,
    }),
    /* @__PURE__ */ z.check((ctx) => {
      const path = emptyKeyPath(ctx.value);
      if (path === undefined) return;
      ctx.issues.push({
        code: 'custom',
        input: ctx.value,
        path,
        message: 'is an empty key, which cannot be stored: give every key a name',
      });
    }),
  );

/**
 * Settings the API understands, per slot kind. Other keys pass through untouched; a known key with
 * a wrong type is refused, so neither a user nor a synthesis can store a broken model slot.
 */
const knownSettingsSchema = /* @__PURE__ */ z.looseObject({
  model: /* @__PURE__ */ z.optional(/* @__PURE__ */ boundedString(1, 200)),
  temperature: /* @__PURE__ */ z.optional(/* @__PURE__ */ boundedNumber(0, 2)),
  topP: /* @__PURE__ */ z.optional(/* @__PURE__ */ boundedNumber(0, 1)),
  maxTokens: /* @__PURE__ */ z.optional(/* @__PURE__ */ boundedInt(1, 1_000_000)),
  timeoutMs: /* @__PURE__ */ z.optional(/* @__PURE__ */ boundedInt(1, 3_600_000)),
  maxRetries: /* @__PURE__ */ z.optional(/* @__PURE__ */ boundedInt(0, 20)),
  topK: /* @__PURE__ */ z.optional(/* @__PURE__ */ boundedInt(1, 10_000)),
  instructions: /* @__PURE__ */ z.optional(/* @__PURE__ */ shortString(100_000)),
  template: /* @__PURE__ */ z.optional(/* @__PURE__ */ shortString(100_000)),
  responseFormat: /* @__PURE__ */ z.optional(/* @__PURE__ */ shortString(200)),
});

export const slotSettingsSchema = /* @__PURE__ */ z.pipe(jsonObjectSchema, knownSettingsSchema);

export const slotSchema = /* @__PURE__ */ z.object({
  id: idSchema,
  name: /* @__PURE__ */ boundedString(1, NAME_LENGTH),
  kind: slotKindSchema,
  settings: slotSettingsSchema,
});
export type Slot = z.infer<typeof slotSchema>;

const slotsSchema = /* @__PURE__ */ z
  .array(slotSchema)
  .check(
    /* @__PURE__ */ z.minLength(1),
    /* @__PURE__ */ z.maxLength(SLOTS_PER_CONFIGURATION),
    /* @__PURE__ */ z.refine((slots) => new Set(slots.map((slot) => slot.id)).size === slots.length, {
      message: 'slot ids must be unique',
    }),
  )
  ./* @__PURE__ */ register(/* @__PURE__ */ z.globalRegistry, {
    description: 'The slots of the configuration; each slot id appears once.',
  });

export const pipelineSchema = /* @__PURE__ */ z.object({
  id: idSchema,
  teamId: idSchema,
  name: /* @__PURE__ */ boundedString(1, NAME_LENGTH),
  activeConfigurationId: idSchema,
  createdAt: timestampSchema,
  /** The active rollout, or null; the store always answers it (optional so a new pipeline needs none). */
  rollout: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.nullable(rolloutSchema)),
});
export type Pipeline = z.infer<typeof pipelineSchema>;

export const configurationSchema = /* @__PURE__ */ z.object({
  id: idSchema,
  pipelineId: idSchema,
  version: /* @__PURE__ */ minInt(1),
  slots: slotsSchema,
  source: /* @__PURE__ */ z.enum(['manual', 'synthesis']),
  synthesisRunId: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
  /** Set when only some of a run's changes were applied (or rebased): which ones. */
  appliedChangeIds: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.array(/* @__PURE__ */ z.string())),
  createdAt: timestampSchema,
  createdBy: /* @__PURE__ */ z.string(),
});
export type Configuration = z.infer<typeof configurationSchema>;

export const createPipelineBodySchema = /* @__PURE__ */ z.strictObject({
  name: /* @__PURE__ */ trimmedString(1, NAME_LENGTH),
  slots: slotsSchema,
});
export type CreatePipelineBody = z.infer<typeof createPipelineBodySchema>;

export const activateBodySchema = /* @__PURE__ */ z.strictObject({
  reason: /* @__PURE__ */ z.optional(/* @__PURE__ */ trimmedString(1, MESSAGE_LENGTH)),
  /**
   * An admin activating despite a failing approval rule, or bringing back a candidate a rollout
   * rolled back: why, in words (stored on the activation and in its event).
   */
  override: /* @__PURE__ */ z.optional(
    /* @__PURE__ */ z.strictObject({ reason: /* @__PURE__ */ trimmedString(1, MESSAGE_LENGTH) }),
  ),
});
export type ActivateBody = z.infer<typeof activateBodySchema>;

/** One change of a pipeline's active configuration: the history a reviewer reads. */
export const activationSchema = /* @__PURE__ */ z.object({
  id: idSchema,
  pipelineId: idSchema,
  configurationId: idSchema,
  version: /* @__PURE__ */ minInt(1),
  previousConfigurationId: idSchema,
  previousVersion: /* @__PURE__ */ minInt(1),
  source: /* @__PURE__ */ z.enum(['approval', 'rollback', 'rollout']),
  synthesisRunId: /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.string()),
  reason: /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.string()),
  /** e.g. "Restored version 1 (replacing version 3)" or "Approved synthesis run … (version 2)". */
  summary: /* @__PURE__ */ z.string(),
  activatedAt: timestampSchema,
  activatedBy: /* @__PURE__ */ z.string(),
  /** An admin's stated override, when the activation passed a rule or a rollback by one (absent before it was kept). */
  overrideReason: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.nullable(/* @__PURE__ */ z.string())),
});
export type Activation = z.infer<typeof activationSchema>;

/** What serving reads in one GetItem; kept in step with the pipeline item by the same transactions. */
export const servingStateSchema = /* @__PURE__ */ z.object({
  pipelineId: idSchema,
  teamId: idSchema,
  active: configurationSchema,
  rollout: /* @__PURE__ */ z.nullable(
    /* @__PURE__ */ z.object({
      id: idSchema,
      percent: /* @__PURE__ */ boundedInt(1, 99),
      candidate: configurationSchema,
    }),
  ),
});
export type ServingState = z.infer<typeof servingStateSchema>;

export const servingConfigurationSchema = /* @__PURE__ */ z.object({
  configuration: configurationSchema,
  arm: /* @__PURE__ */ z.enum(['active', 'candidate']),
  rolloutId: /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.string()),
});

/** A routing key: a user or conversation id, 1–256 characters. */
export const routingKeySchema = /* @__PURE__ */ boundedString(1, 256);
