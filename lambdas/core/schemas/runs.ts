/*
 * Synthesis runs: the run as stored and polled (diagnosis, changes, confidence, what generating it
 * cost), the body that starts one, its queued job and the Idempotency-Key header.
 */

import * as z from 'zod/mini';
import { SYNTHESIS_HANDLER_NAMES } from '../synthesis-handlers.ts';
import { boundedString, idSchema, minInt, runIdSchema, timestampSchema } from './common.ts';
import { evaluationSummarySchema } from './evaluation.ts';

export const runStatusSchema = /* @__PURE__ */ z.enum([
  'pending',
  'generating',
  'generated',
  'approved',
  'rejected',
  'failed',
]);
export type RunStatus = z.infer<typeof runStatusSchema>;

export const confidenceSchema = /* @__PURE__ */ z.enum(['low', 'medium', 'high']);
export type Confidence = z.infer<typeof confidenceSchema>;

export const findingSchema = /* @__PURE__ */ z.object({
  id: /* @__PURE__ */ z.string(),
  description: /* @__PURE__ */ z.string(),
  signalIds: /* @__PURE__ */ z.array(/* @__PURE__ */ z.string()),
  /** Executions of the pipeline the finding rests on, most recent first (runs stored before they were cited read []). */
  executionIds: /* @__PURE__ */ z._default(/* @__PURE__ */ z.array(/* @__PURE__ */ z.string()), () => []),
  /** A refinement's finding: the cases of its parent's evaluation it rests on (execution ids). */
  caseIds: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.array(/* @__PURE__ */ z.string())),
});
export type Finding = z.infer<typeof findingSchema>;
export const diagnosisSchema = /* @__PURE__ */ z.object({
  summary: /* @__PURE__ */ z.string(),
  findings: /* @__PURE__ */ z.array(findingSchema),
});
export type Diagnosis = z.infer<typeof diagnosisSchema>;

export const changeSchema = /* @__PURE__ */ z.object({
  id: /* @__PURE__ */ z.string(),
  slotId: /* @__PURE__ */ z.string(),
  description: /* @__PURE__ */ z.string(),
  rationale: /* @__PURE__ */ z.string(),
  findingIds: /* @__PURE__ */ z.array(/* @__PURE__ */ z.string()),
  patch: /* @__PURE__ */ z.record(/* @__PURE__ */ z.string(), /* @__PURE__ */ z.unknown()),
});
export type Change = z.infer<typeof changeSchema>;

export const structuredWarningSchema = /* @__PURE__ */ z.object({
  type: /* @__PURE__ */ z.string(),
  message: /* @__PURE__ */ z.string(),
  changeIds: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.array(/* @__PURE__ */ z.string())),
});
export type StructuredWarning = z.infer<typeof structuredWarningSchema>;

/** What generating a run cost: the model, its input and output tokens over all requests, the requests made. */
export const synthesisUsageSchema = /* @__PURE__ */ z.object({
  model: /* @__PURE__ */ z.string(),
  inputTokens: /* @__PURE__ */ minInt(0),
  /** Of inputTokens, read from the provider's prompt cache; absent on runs made before caching. */
  cacheReadInputTokens: /* @__PURE__ */ z.optional(/* @__PURE__ */ minInt(0)),
  /** Of inputTokens, written to the provider's prompt cache; absent on runs made before caching. */
  cacheWriteInputTokens: /* @__PURE__ */ z.optional(/* @__PURE__ */ minInt(0)),
  outputTokens: /* @__PURE__ */ minInt(0),
  attempts: /* @__PURE__ */ minInt(0),
  /** What the tokens cost at the price table's rates (core/model-pricing.ts); absent for a model it has no price for. */
  costUsd: /* @__PURE__ */ z.optional(
    /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.number().check(/* @__PURE__ */ z.gte(0))),
  ),
});

export const synthesisRunSchema = /* @__PURE__ */ z.object({
  id: runIdSchema,
  pipelineId: idSchema,
  teamId: idSchema,
  status: runStatusSchema,
  synthesisHandler: /* @__PURE__ */ z.string(),
  baseConfigurationId: idSchema,
  proposedConfigurationId: /* @__PURE__ */ z.nullable(idSchema),
  explanation: /* @__PURE__ */ z.string(),
  warnings: /* @__PURE__ */ z.array(/* @__PURE__ */ z.string()),
  diagnosis: /* @__PURE__ */ z.nullable(diagnosisSchema),
  changes: /* @__PURE__ */ z.array(changeSchema),
  structuredWarnings: /* @__PURE__ */ z.array(structuredWarningSchema),
  confidence: /* @__PURE__ */ z.nullable(confidenceSchema),
  analyzedSignalIds: /* @__PURE__ */ z.array(/* @__PURE__ */ z.string()),
  /** The executions the synthesis was shown (and its findings may cite); [] on runs stored before. */
  analyzedExecutionIds: /* @__PURE__ */ z._default(
    /* @__PURE__ */ z.array(/* @__PURE__ */ z.string()),
    () => [],
  ),
  jobId: /* @__PURE__ */ z.string(),
  errorMessage: /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.string()),
  createdAt: timestampSchema,
  triggeredBy: /* @__PURE__ */ z.string(),
  generationStartedAt: /* @__PURE__ */ z.nullable(timestampSchema),
  generationCompletedAt: /* @__PURE__ */ z.nullable(timestampSchema),
  approvedAt: /* @__PURE__ */ z.nullable(timestampSchema),
  approvedBy: /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.string()),
  rejectedAt: /* @__PURE__ */ z.nullable(timestampSchema),
  rejectedBy: /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.string()),
  /** Why the reviewer rejected the proposal, when they said. */
  rejectionReason: /* @__PURE__ */ z._default(/* @__PURE__ */ z.nullable(/* @__PURE__ */ z.string()), null),
  /** Why the latest attempt is being retried, while the run is pending or generating; else null. */
  retryReason: /* @__PURE__ */ z._default(/* @__PURE__ */ z.nullable(/* @__PURE__ */ z.string()), null),
  /** null until generated, and for handlers that call no model; optional so older items still read. */
  usage: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.nullable(synthesisUsageSchema)),
  /** The replay of the proposal on recorded executions, once a runner posted results; absent before. */
  evaluation: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.nullable(evaluationSummarySchema)),
  /** Why an admin approved against the pipeline's evaluation rules, when they did. */
  approvalOverrideReason: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.nullable(/* @__PURE__ */ z.string())),
  /** The changes an approval applied (null until approved). */
  approvedChangeIds: /* @__PURE__ */ z._default(
    /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.array(/* @__PURE__ */ z.string())),
    null,
  ),
  /** The configuration the approval activated or rolled out (null until approved). */
  appliedConfigurationId: /* @__PURE__ */ z._default(/* @__PURE__ */ z.nullable(idSchema), null),
  /** The rollout the approval started, when it started one. */
  rolloutId: /* @__PURE__ */ z._default(/* @__PURE__ */ z.nullable(/* @__PURE__ */ z.string()), null),
  /** A refinement's parent: the evaluated run whose evaluation it learned from (null otherwise). */
  parentRunId: /* @__PURE__ */ z._default(/* @__PURE__ */ z.nullable(runIdSchema), null),
  /** The first run of a refinement's chain (null for a run that is no refinement: it is its own). */
  rootRunId: /* @__PURE__ */ z._default(/* @__PURE__ */ z.nullable(runIdSchema), null),
  /** The model cost expected before the run started: its prompt's tokens at the price table's rates. */
  estimatedCostUsd: /* @__PURE__ */ z._default(
    /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.number().check(/* @__PURE__ */ z.gte(0))),
    null,
  ),
  /** What its model calls cost, from the usage the model reported (null until the run ended). */
  costUsd: /* @__PURE__ */ z._default(
    /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.number().check(/* @__PURE__ */ z.gte(0))),
    null,
  ),
});
export type SynthesisRun = z.infer<typeof synthesisRunSchema>;

export const synthesizeBodySchema = /* @__PURE__ */ z.strictObject({
  synthesisHandler: /* @__PURE__ */ z.optional(
    // The message is a function: a string built here would keep this schema in every bundle.
    /* @__PURE__ */ z.enum(SYNTHESIS_HANDLER_NAMES, {
      error: () => `must be one of ${SYNTHESIS_HANDLER_NAMES.join(', ')}`,
    }),
  ),
  /** A refinement: the generated, evaluated run of the same pipeline whose evaluation it learns from. */
  parentRunId: /* @__PURE__ */ z.optional(runIdSchema),
});

/**
 * The job message on the synthesis queue. `teamId` is also its message group, so SQS fair queues
 * keep one team's burst from delaying the others; messages sent before it was added have none.
 */
export const synthesisJobSchema = /* @__PURE__ */ z.strictObject({
  runId: runIdSchema,
  jobId: /* @__PURE__ */ boundedString(1, 64),
  teamId: /* @__PURE__ */ z.optional(idSchema),
});
export type SynthesisJob = z.infer<typeof synthesisJobSchema>;

/** The Idempotency-Key header: what Stripe and the IETF draft allow, printable ASCII. */
export const idempotencyKeySchema = /* @__PURE__ */ z
  .string()
  .check(
    /* @__PURE__ */ z.minLength(1),
    /* @__PURE__ */ z.maxLength(255),
    /* @__PURE__ */ z.regex(/^[\x21-\x7E]+$/, 'must be 1-255 printable ASCII characters without spaces'),
  );
