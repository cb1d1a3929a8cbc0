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

/**
 * A case replayed on the base, the candidate, or one change arm: `change:<id>`, the base with that
 * change of the run alone (docs/optimize.md says why that arm and not the candidate without it).
 */
export const evaluationArmSchema = /* @__PURE__ */ z.union([
  /* @__PURE__ */ z.enum(['base', 'candidate']),
  /* @__PURE__ */ z
    .string()
    .check(
      /* @__PURE__ */ z.regex(
        /^change:[1-9][0-9]{0,2}$/,
        'must be "base", "candidate" or "change:<id>" naming a change of the run',
      ),
    ),
]);
export type EvaluationArm = 'base' | 'candidate' | `change:${string}`;

/** The arm that replays change `id` alone on the base. */
export const changeArm = (changeId: string): `change:${string}` => `change:${changeId}`;

/** A result of the base plus one change: how it compares with the base, over the same cases. */
export const changeOutcomeSchema = /* @__PURE__ */ z.object({
  changeId: /* @__PURE__ */ z.string(),
  /** Cases with a result on the base and on this change's arm. */
  evaluated: /* @__PURE__ */ minInt(0),
  /** Failed on the base, passed with this change alone (at most 50 ids; `fixedCount` counts them all). */
  fixed: /* @__PURE__ */ z.array(/* @__PURE__ */ z.string()),
  fixedCount: /* @__PURE__ */ minInt(0),
  /** Passed on the base, failed with this change alone (at most 50 ids; `brokenCount` counts them all). */
  broken: /* @__PURE__ */ z.array(/* @__PURE__ */ z.string()),
  brokenCount: /* @__PURE__ */ minInt(0),
});
export type ChangeOutcome = z.infer<typeof changeOutcomeSchema>;

/** The held-out cases' figures: the part of the set no synthesis of the chain learns from. */
export const heldOutFiguresSchema = /* @__PURE__ */ z.object({
  cases: /* @__PURE__ */ minInt(0),
  /** Held-out cases with a result on both arms. */
  evaluated: /* @__PURE__ */ minInt(0),
  /** Held-out cases that failed on the base. */
  baseFailed: /* @__PURE__ */ minInt(0),
  fixed: /* @__PURE__ */ z.array(/* @__PURE__ */ z.string()),
  regressed: /* @__PURE__ */ z.array(/* @__PURE__ */ z.string()),
  /** Failed on both arms. */
  stillFailing: /* @__PURE__ */ z.array(/* @__PURE__ */ z.string()),
});
export type HeldOutFigures = z.infer<typeof heldOutFiguresSchema>;

/** Which changes the evaluation says to approve, and the same in words for a person. */
export const recommendationSchema = /* @__PURE__ */ z.object({
  changeIds: /* @__PURE__ */ z.array(/* @__PURE__ */ z.string()),
  text: /* @__PURE__ */ z.string(),
});
export type Recommendation = z.infer<typeof recommendationSchema>;

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
  /** Per change with results on its own arm (`change:<id>`): the cases it fixed and broke alone. */
  changes: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.array(changeOutcomeSchema)),
  /** The held-out cases' figures (null on sets chosen before cases were held out). */
  heldOut: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.nullable(heldOutFiguresSchema)),
  /** Which changes to approve, from the per-change arms when replayed (null before any result). */
  recommendation: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.nullable(recommendationSchema)),
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
  /** Held out: never shown to a synthesis of the run's chain; its figures are the chain's result. */
  heldOut: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.boolean()),
  error: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
  input: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.unknown()),
  /** The latest result of each arm posted so far (absent before any). */
  results: /* @__PURE__ */ z.optional(
    /* @__PURE__ */ z.object({
      base: /* @__PURE__ */ z.optional(storedEvaluationResultSchema),
      candidate: /* @__PURE__ */ z.optional(storedEvaluationResultSchema),
      /** The latest result of each change arm, by change id (absent before any). */
      changes: /* @__PURE__ */ z.optional(
        /* @__PURE__ */ z.record(/* @__PURE__ */ z.string(), storedEvaluationResultSchema),
      ),
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
  /** The run whose set this is: the run itself, or the first run of its chain (a refinement shares it). */
  chainRootRunId: runIdSchema,
});
export type EvaluationSet = z.infer<typeof evaluationSetSchema>;

export const recordEvaluationsBodySchema = /* @__PURE__ */ z.strictObject({
  results: /* @__PURE__ */ z
    .array(evaluationResultSchema)
    .check(
      /* @__PURE__ */ z.minLength(1),
      /* @__PURE__ */ z.maxLength(EVALUATION_BATCH),
      /* @__PURE__ */ z.refine(
        (results) => new Set(results.map((r) => `${r.executionId}#${r.arm}`)).size === results.length,
        {
          message: 'a case and arm may appear once in a batch',
        },
      ),
    )
    ./* @__PURE__ */ register(/* @__PURE__ */ z.globalRegistry, {
      description: 'At most 100 results; each (executionId, arm) appears once in the batch.',
    }),
});
