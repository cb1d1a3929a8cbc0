/*
 * A reviewer's decisions: the approve and reject bodies, and a pipeline's approval rules.
 */
import * as z from 'zod/mini';
import {
  boundedInt,
  boundedString,
  idSchema,
  MESSAGE_LENGTH,
  timestampSchema,
  trimmedString,
} from './common.ts';
import { rolloutSettingsSchema } from './rollouts.ts';

export const rejectBodySchema = /* @__PURE__ */ z.strictObject({
  reason: /* @__PURE__ */ z.optional(/* @__PURE__ */ trimmedString(1, MESSAGE_LENGTH)),
});

/** A pipeline's approval rules; a pipeline without stored rules has APPROVAL_RULE_DEFAULTS. */
export const approvalRulesSchema = /* @__PURE__ */ z.strictObject({
  requireEvaluation: /* @__PURE__ */ z.boolean(),
  maxRegressions: /* @__PURE__ */ boundedInt(0, 1_000_000),
  minEvaluatedCases: /* @__PURE__ */ boundedInt(0, 1_000_000),
  forbidSelfApproval: /* @__PURE__ */ z.boolean(),
  allowApiTokens: /* @__PURE__ */ z.boolean(),
});
export type ApprovalRules = z.infer<typeof approvalRulesSchema>;

export const APPROVAL_RULE_DEFAULTS: ApprovalRules = {
  requireEvaluation: false,
  maxRegressions: 0,
  minEvaluatedCases: 0,
  forbidSelfApproval: false,
  allowApiTokens: true,
};

/** The rules as GET answers them: with who changed them last (null for the defaults). */
export const storedApprovalRulesSchema = /* @__PURE__ */ (() =>
  z.object({
    ...approvalRulesSchema.shape,
    pipelineId: idSchema,
    updatedAt: z.nullable(timestampSchema),
    updatedBy: z.nullable(z.string()),
  }))();
export type StoredApprovalRules = z.infer<typeof storedApprovalRulesSchema>;

/** The approve body: which changes, whether to rebase onto the active configuration, a rollout. */
export const approveBodySchema = /* @__PURE__ */ z.strictObject({
  changeIds: /* @__PURE__ */ z
    .optional(
      /* @__PURE__ */ z.array(/* @__PURE__ */ boundedString(1, 16)).check(
        /* @__PURE__ */ z.minLength(1, 'must name at least one change; leave it out to approve every change'),
        /* @__PURE__ */ z.maxLength(100),
        /* @__PURE__ */ z.refine((ids) => new Set(ids).size === ids.length, {
          message: 'must not repeat a change id',
        }),
      ),
      // The document says what the refinement checks (JSON Schema cannot run it).
    )
    ./* @__PURE__ */ register(/* @__PURE__ */ z.globalRegistry, { uniqueItems: true } as never),
  rebase: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.boolean()),
  rollout: /* @__PURE__ */ z.optional(rolloutSettingsSchema),
  /** An admin's reason to approve although the evaluation rules fail (never the self-approval rule). */
  override: /* @__PURE__ */ z.optional(
    /* @__PURE__ */ z.strictObject({ reason: /* @__PURE__ */ trimmedString(1, MESSAGE_LENGTH) }),
  ),
});
export type ApproveBody = z.infer<typeof approveBodySchema>;
