/*
 * Checking a proposal before approval: a runner's results per case and arm, the run's evaluation
 * set and the summary the run carries.
 */
import * as z from 'zod/mini';
import {
  boundedNumber,
  EVALUATION_BATCH,
  idSchema,
  MESSAGE_LENGTH,
  minInt,
  runIdSchema,
  shortString,
  timestampSchema,
} from './common.ts';
import { configurationSchema } from './pipelines.ts';

export const evaluationArmSchema = /* @__PURE__ */ z.enum(['base', 'candidate']);
export type EvaluationArm = z.infer<typeof evaluationArmSchema>;

/** The pass counts of one arm over the cases with a result on both arms. */
const armCountsSchema = /* @__PURE__ */ z.object({
  passed: /* @__PURE__ */ minInt(0),
  failed: /* @__PURE__ */ minInt(0),
});

/** The stored summary of a run's evaluation, rewritten after every batch of results. */
export const evaluationSummarySchema = /* @__PURE__ */ z.object({
  /** Cases in the evaluation set. */
  cases: /* @__PURE__ */ minInt(0),
  /** Cases with a result on both arms. */
  evaluated: /* @__PURE__ */ minInt(0),
  base: armCountsSchema,
  candidate: armCountsSchema,
  /** Failed on the base, passed on the candidate. */
  fixed: /* @__PURE__ */ z.array(/* @__PURE__ */ z.string()),
  /** Passed on the base, failed on the candidate. */
  regressed: /* @__PURE__ */ z.array(/* @__PURE__ */ z.string()),
  /** Candidate minus base, means over the cases reporting the figure on both arms; null when none does. */
  durationMsDelta: /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.number()),
  costUsdDelta: /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.number()),
  updatedAt: timestampSchema,
});
export type EvaluationSummary = z.infer<typeof evaluationSummarySchema>;

/** One result of a runner: a case replayed on one arm. */
export const evaluationResultSchema = /* @__PURE__ */ z.strictObject({
  executionId: idSchema,
  arm: evaluationArmSchema,
  passed: /* @__PURE__ */ z.boolean(),
  score: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.number()),
  durationMs: /* @__PURE__ */ z.optional(/* @__PURE__ */ boundedNumber(0, 86_400_000)),
  costUsd: /* @__PURE__ */ z.optional(/* @__PURE__ */ boundedNumber(0, 1_000_000)),
  detail: /* @__PURE__ */ z.optional(/* @__PURE__ */ shortString(MESSAGE_LENGTH)),
});
export type EvaluationResult = z.infer<typeof evaluationResultSchema>;

/** A stored result, with when it arrived. */
export const storedEvaluationResultSchema = /* @__PURE__ */ (() =>
  z.object({ ...evaluationResultSchema.shape, recordedAt: timestampSchema }))();
export type StoredEvaluationResult = z.infer<typeof storedEvaluationResultSchema>;

/** One case of a run's evaluation set: an execution, why it was chosen, and what it was given. */
export const evaluationCaseSchema = /* @__PURE__ */ z.object({
  executionId: idSchema,
  reason: /* @__PURE__ */ z.enum(['cited', 'failed', 'succeeded']),
  status: /* @__PURE__ */ z.enum(['succeeded', 'failed']),
  startedAt: timestampSchema,
  error: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
  input: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.unknown()),
  /** The latest result of each arm posted so far (absent before any). */
  results: /* @__PURE__ */ z.optional(
    /* @__PURE__ */ z.object({
      base: /* @__PURE__ */ z.optional(storedEvaluationResultSchema),
      candidate: /* @__PURE__ */ z.optional(storedEvaluationResultSchema),
    }),
  ),
});
export type EvaluationCase = z.infer<typeof evaluationCaseSchema>;

export const evaluationSetSchema = /* @__PURE__ */ z.object({
  runId: runIdSchema,
  baseConfiguration: configurationSchema,
  candidateConfiguration: configurationSchema,
  cases: /* @__PURE__ */ z.array(evaluationCaseSchema),
  /** When the set was chosen (it never changes after). */
  chosenAt: timestampSchema,
});
export type EvaluationSet = z.infer<typeof evaluationSetSchema>;

export const recordEvaluationsBodySchema = /* @__PURE__ */ z.strictObject({
  results: /* @__PURE__ */ z.array(evaluationResultSchema).check(
    /* @__PURE__ */ z.minLength(1),
    /* @__PURE__ */ z.maxLength(EVALUATION_BATCH),
    /* @__PURE__ */ z.refine(
      (results) => new Set(results.map((r) => `${r.executionId}#${r.arm}`)).size === results.length,
      {
        message: 'a case and arm may appear once in a batch',
      },
    ),
  ),
});
