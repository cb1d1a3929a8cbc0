/* A chain of runs on the wire: a first run and its refinements, each round's figures, the best run. */
import * as z from 'zod/mini';
import { runIdSchema } from './common.ts';
import { heldOutFiguresSchema, recommendationSchema } from './evaluation.ts';
import { runStatusSchema } from './runs.ts';

export const chainRoundSchema = /* @__PURE__ */ z.object({
  runId: runIdSchema,
  parentRunId: /* @__PURE__ */ z.nullable(runIdSchema),
  status: runStatusSchema,
  synthesisHandler: /* @__PURE__ */ z.string(),
  createdAt: /* @__PURE__ */ z.string(),
  changeCount: /* @__PURE__ */ z.number(),
  /** Its evaluation's cases with a result on both arms (0 before any). */
  evaluated: /* @__PURE__ */ z.number(),
  /** Over the whole set: fixed and regressed cases. */
  fixed: /* @__PURE__ */ z.number(),
  regressed: /* @__PURE__ */ z.number(),
  /** The held-out cases' figures: the ones that count (null before any result). */
  heldOut: /* @__PURE__ */ z.nullable(heldOutFiguresSchema),
  recommendation: /* @__PURE__ */ z.nullable(recommendationSchema),
  estimatedCostUsd: /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.number()),
  costUsd: /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.number()),
});
export type ChainRound = z.infer<typeof chainRoundSchema>;

export const runChainSchema = /* @__PURE__ */ z.object({
  rootRunId: runIdSchema,
  /** Oldest first: the first run, then each refinement in the order it was started. */
  runs: /* @__PURE__ */ z.array(chainRoundSchema),
  /** The evaluated, generated run with most held-out fixed minus broken cases, ties to the whole set's, then the fewest changes (null before any). */
  bestRunId: /* @__PURE__ */ z.nullable(runIdSchema),
});
export type RunChain = z.infer<typeof runChainSchema>;
