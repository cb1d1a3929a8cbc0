/*
 * Rollouts and their measured effect: a candidate served to part of a pipeline's traffic, how a
 * rollout serves and judges it, and the effect of an approval measured on two arms.
 */
import * as z from 'zod/mini';
import {
  boundedInt,
  idSchema,
  MESSAGE_LENGTH,
  slotKindSchema,
  timestampSchema,
  trimmedString,
} from './common.ts';

/** At most this many guarded metrics a rollout. */
export const MAX_GUARDRAILS = 5;

/**
 * A guarded metric: `threshold` (≥ 0, the metric's unit) is the regression the team tolerates;
 * a signal names its `kind` and `direction` and needs a threshold (core/rollouts/guards.ts).
 */
export const guardrailSchema = /* @__PURE__ */ z
  .strictObject({
    metric: /* @__PURE__ */ z.enum(['failure_rate', 'duration_ms', 'tokens', 'signal']),
    kind: /* @__PURE__ */ z.optional(slotKindSchema),
    direction: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.enum(['higher_is_better', 'lower_is_better'])),
    threshold: /* @__PURE__ */ z.optional(
      /* @__PURE__ */ z.number().check(/* @__PURE__ */ z.gte(0), /* @__PURE__ */ z.lte(1_000_000_000)),
    ),
  })
  .check(
    /* @__PURE__ */ z.refine((guard) => guard.metric !== 'signal' || guard.kind !== undefined, {
      message:
        'a signal guardrail names the signal kind it reads, e.g. {"metric": "signal", "kind": "relevance"}',
    }),
    /* @__PURE__ */ z.refine((guard) => guard.metric !== 'signal' || guard.direction !== undefined, {
      message:
        'a signal guardrail says which way is better: "direction": "higher_is_better" or "lower_is_better"',
    }),
    /* @__PURE__ */ z.refine((guard) => guard.metric !== 'signal' || guard.threshold !== undefined, {
      message: 'a signal guardrail needs a threshold: the regression of its mean value the team tolerates',
    }),
    /* @__PURE__ */ z.refine((guard) => guard.metric === 'signal' || guard.kind === undefined, {
      message: 'only a signal guardrail has a kind',
    }),
    /* @__PURE__ */ z.refine((guard) => guard.metric === 'signal' || guard.direction === undefined, {
      message: 'only a signal guardrail has a direction (lower is better for the others)',
    }),
  );
export type Guardrail = z.infer<typeof guardrailSchema>;

const guardrailsSchema = /* @__PURE__ */ z.array(guardrailSchema).check(
  /* @__PURE__ */ z.minLength(1),
  /* @__PURE__ */ z.maxLength(MAX_GUARDRAILS),
  /* @__PURE__ */ z.refine(
    (guards) => new Set(guards.map((guard) => `${guard.metric}/${guard.kind ?? ''}`)).size === guards.length,
    { message: 'each metric (and signal kind) is guarded once' },
  ),
);

/** The candidate's shares, increasing, 1–99 (at most 10 steps). */
const stepsSchema = /* @__PURE__ */ z.array(/* @__PURE__ */ boundedInt(1, 99)).check(
  /* @__PURE__ */ z.minLength(1),
  /* @__PURE__ */ z.maxLength(10),
  /* @__PURE__ */ z.refine(
    (steps) => steps.every((share, i) => i === 0 || share > (steps[i - 1] as number)),
    {
      message: 'steps must increase, e.g. [5, 25, 50]',
    },
  ),
);

/** A candidate served to part of a pipeline's traffic, judged by its guardrails until it is promoted or rolled back. */
export const rolloutSchema = /* @__PURE__ */ z.object({
  id: idSchema,
  pipelineId: idSchema,
  synthesisRunId: /* @__PURE__ */ z.string(),
  baseConfigurationId: idSchema,
  candidateConfigurationId: idSchema,
  /** The candidate's current share (the current step's). */
  percent: /* @__PURE__ */ boundedInt(1, 99),
  /** The shares it moves through (absent for a rollout of one share, or started before steps). */
  steps: /* @__PURE__ */ z.optional(stepsSchema),
  /** The index of the current step in `steps` (0 without steps). */
  step: /* @__PURE__ */ z.optional(/* @__PURE__ */ boundedInt(0, 9)),
  /** When the current step began (absent: at startedAt). */
  stepStartedAt: /* @__PURE__ */ z.optional(timestampSchema),
  /** The guarded metrics (absent: the failure rate with its default threshold). */
  guardrails: /* @__PURE__ */ z.optional(guardrailsSchema),
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
export const rolloutSettingsSchema = /* @__PURE__ */ z
  .strictObject({
    percent: /* @__PURE__ */ boundedInt(1, 99),
    /** Increasing shares after `percent` is held, e.g. [5, 25, 50] (the first is `percent`). */
    steps: /* @__PURE__ */ z.optional(stepsSchema),
    guardrails: /* @__PURE__ */ z.optional(guardrailsSchema),
    minExecutions: /* @__PURE__ */ z.optional(/* @__PURE__ */ boundedInt(30, 100_000)),
    autoPromote: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.boolean()),
    autoRollback: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.boolean()),
  })
  .check(
    /* @__PURE__ */ z.refine(
      (settings) => settings.steps === undefined || settings.steps[0] === settings.percent,
      {
        message: 'steps start at the rollout\'s percent: e.g. "percent": 5 with "steps": [5, 25, 50]',
        path: ['steps'],
      },
    ),
  );

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

const intervalSchema = /* @__PURE__ */ z.tuple([/* @__PURE__ */ z.number(), /* @__PURE__ */ z.number()]);

/** One guarded metric of an effect: both arms, applied − base, its anytime-valid interval, a verdict. */
export const effectMetricSchema = /* @__PURE__ */ z.object({
  metric: /* @__PURE__ */ z.enum(['failure_rate', 'duration_ms', 'tokens', 'signal']),
  kind: /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.string()),
  direction: /* @__PURE__ */ z.enum(['higher_is_better', 'lower_is_better']),
  threshold: /* @__PURE__ */ z.number(),
  /** The metric's unit: `rate` (0–1), `ms`, `tokens` or `score` (a signal's value). */
  unit: /* @__PURE__ */ z.string(),
  base: /* @__PURE__ */ z.object({
    n: /* @__PURE__ */ z.int(),
    mean: /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.number()),
  }),
  applied: /* @__PURE__ */ z.object({
    n: /* @__PURE__ */ z.int(),
    mean: /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.number()),
  }),
  difference: /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.number()),
  interval: /* @__PURE__ */ z.nullable(intervalSchema),
  /**
   * The worse end of the interval at the rollout's whole α (95 %), as a difference: within the
   * threshold, the metric is non-inferior (a promotion needs every metric there at once, so each
   * keeps the whole α; `interval` is at the metric's share, as any one metric may roll back).
   */
  worseBound: /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.number()),
  verdict: /* @__PURE__ */ z.enum(['worse', 'better', 'non_inferior', 'inconclusive', 'not_enough_data']),
});

/** A judgement as the chart draws it (`?history=true`): each metric's difference and interval. */
export const effectHistoryPointSchema = /* @__PURE__ */ z.object({
  at: timestampSchema,
  /** The candidate's executions then. */
  n: /* @__PURE__ */ z.int(),
  step: /* @__PURE__ */ z.int(),
  metrics: /* @__PURE__ */ z.array(
    /* @__PURE__ */ z.nullable(
      /* @__PURE__ */ z.object({
        difference: /* @__PURE__ */ z.number(),
        interval: intervalSchema,
        /** Absent on judgements kept before the bound was. */
        worseBound: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.number()),
      }),
    ),
  ),
});

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
  /** Every guarded metric (a before/after effect: the failure rate), judged by the anytime-valid test. */
  metrics: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.array(effectMetricSchema)),
  /** What the figures mean, in words: before/after is not randomized; a rollout started before sums were kept. */
  notes: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.array(/* @__PURE__ */ z.string())),
  /** A rollout's next move in words ("promotes at step 3 of 3 once …"); null when it ended or outside a rollout. */
  next: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.nullable(/* @__PURE__ */ z.string())),
  /**
   * An active rollout's way to its next step: the step's index (0-based) of `steps`, the share,
   * the candidate's executions at this step against the `minExecutions` a step needs; null otherwise.
   */
  progress: /* @__PURE__ */ z.optional(
    /* @__PURE__ */ z.nullable(
      /* @__PURE__ */ z.object({
        step: /* @__PURE__ */ z.int(),
        steps: /* @__PURE__ */ z.int(),
        percent: /* @__PURE__ */ z.int(),
        candidateExecutions: /* @__PURE__ */ z.int(),
        minExecutions: /* @__PURE__ */ z.int(),
      }),
    ),
  ),
  /** With ?history=true: each judgement, oldest first (metrics in the order of `metrics`). */
  history: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.array(effectHistoryPointSchema)),
});
