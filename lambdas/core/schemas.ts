/*
 * The API's records and request bodies as zod/mini schemas, with the limits every edge enforces:
 * what is stored, what is accepted, and the types the rest of the code uses.
 */
import * as z from 'zod/mini';
import './zod-locale.ts';

/** Limits every edge enforces; documented in the README. */
export const LIMITS = {
  batchSize: 100,
  slotsPerConfiguration: 50,
  nameLength: 200,
  messageLength: 4_000,
  settingsBytes: 16_000,
  /** An execution's `input`, serialized as JSON (UTF-8). */
  inputBytes: 16_384,
  /** Results a runner may post in one request. */
  evaluationBatch: 100,
  bodyBytes: 1_000_000,
  pageSize: 100,
} as const;

/*
 * The limits as plain constants for the schemas below, which read no property (LIMITS.x, a shape)
 * and build no string from a value in their arguments: esbuild keeps a top-level statement that
 * does either (it may run code), so such a schema, and all it is built from, would be bundled and
 * built at the cold start of every function importing this module, used or not.
 */
const {
  batchSize,
  slotsPerConfiguration,
  nameLength,
  messageLength,
  settingsBytes,
  inputBytes,
  evaluationBatch,
} = LIMITS;

/** Server ids are nanoids; client-supplied ids share their alphabet. */
export const idSchema = /* @__PURE__ */ z
  .string()
  .check(
    /* @__PURE__ */ z.minLength(1),
    /* @__PURE__ */ z.maxLength(64),
    /* @__PURE__ */ z.regex(/^[A-Za-z0-9_-]+$/, 'must contain only A-Z, a-z, 0-9, _ and -'),
  );

export const runIdSchema = /* @__PURE__ */ z
  .string()
  .check(/* @__PURE__ */ z.regex(/^[A-Za-z0-9_-]{21}$/, 'must be a 21-character nanoid'));

export const timestampSchema = /* @__PURE__ */ z.iso.datetime({ offset: false });

/** How far ahead of the server's clock a client may date an event (clock skew, time zones gone wrong). */
export const MAX_FUTURE_SKEW_MS = 24 * 3_600_000;
const EARLIEST_EVENT = /* @__PURE__ */ Date.parse('2000-01-01T00:00:00Z');

/**
 * When a client says something happened: not before 2000 and at most 24 h ahead of now, so a
 * signal dated 9999-12-31 cannot sit at the top of every "most recent" window.
 */
export const eventTimestampSchema = /* @__PURE__ */ timestampSchema.check(
  /* @__PURE__ */ z.refine(
    (value) => {
      const at = Date.parse(value);
      return at >= EARLIEST_EVENT && at <= Date.now() + MAX_FUTURE_SKEW_MS;
    },
    { message: 'must be from 2000-01-01 to at most 24 hours from now' },
  ),
);

/**
 * Where `value` holds an empty key (the path to it, the empty key last), or undefined when it
 * holds none. DynamoDB refuses an empty attribute name in a map at any depth, so settings and
 * patches of them must not carry one.
 */
export function emptyKeyPath(value: unknown): Array<string | number> | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const entries: Array<[string | number, unknown]> = Array.isArray(value)
    ? [...value.entries()]
    : Object.entries(value);
  for (const [key, child] of entries) {
    if (key === '') return [key];
    const below = emptyKeyPath(child);
    if (below !== undefined) return [key, ...below];
  }
  return undefined;
}

const jsonObjectSchema = /* @__PURE__ */ z
  .record(/* @__PURE__ */ z.string(), /* @__PURE__ */ z.unknown())
  .check(
    /* @__PURE__ */ z.refine((value) => JSON.stringify(value).length <= settingsBytes, {
      error: () => `must serialize to at most ${settingsBytes} bytes`,
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

export const slotKindSchema = /* @__PURE__ */ z
  .string()
  .check(
    /* @__PURE__ */ z.minLength(1),
    /* @__PURE__ */ z.maxLength(64),
    /* @__PURE__ */ z.regex(/^[a-z][a-z0-9_-]*$/, 'must be lower-case, e.g. prompt, model, tool, retrieval'),
  );

/** Strings and numbers with bounds, as zod/mini spells `z.string().min().max()`. */
const boundedString = (min: number, max: number) => z.string().check(z.minLength(min), z.maxLength(max));
const shortString = (max: number) => z.string().check(z.maxLength(max));
const trimmedString = (min: number, max: number) =>
  z.string().check(z.trim(), z.minLength(min), z.maxLength(max));
const boundedNumber = (min: number, max: number) => z.number().check(z.gte(min), z.lte(max));
const boundedInt = (min: number, max: number) => z.int().check(z.gte(min), z.lte(max));
const minInt = (min: number) => z.int().check(z.gte(min));

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
  name: /* @__PURE__ */ boundedString(1, nameLength),
  kind: slotKindSchema,
  settings: slotSettingsSchema,
});
export type Slot = z.infer<typeof slotSchema>;

const slotsSchema = /* @__PURE__ */ z.array(slotSchema).check(
  /* @__PURE__ */ z.minLength(1),
  /* @__PURE__ */ z.maxLength(slotsPerConfiguration),
  /* @__PURE__ */ z.refine((slots) => new Set(slots.map((slot) => slot.id)).size === slots.length, {
    message: 'slot ids must be unique',
  }),
);

/** A candidate served to part of a pipeline's traffic (DESIGN.md §7 "Rollouts"). */
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

export const pipelineSchema = /* @__PURE__ */ z.object({
  id: idSchema,
  teamId: idSchema,
  name: /* @__PURE__ */ boundedString(1, nameLength),
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

export const severitySchema = /* @__PURE__ */ z.enum(['info', 'warning', 'critical']);
export type Severity = z.infer<typeof severitySchema>;

export const signalSchema = /* @__PURE__ */ z.object({
  id: idSchema,
  pipelineId: idSchema,
  kind: slotKindSchema,
  severity: severitySchema,
  message: /* @__PURE__ */ boundedString(1, messageLength),
  slotId: /* @__PURE__ */ z.optional(idSchema),
  executionId: /* @__PURE__ */ z.optional(idSchema),
  // z.number() refuses Infinity and NaN already (classic zod's .finite() was a no-op).
  value: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.number()),
  occurredAt: timestampSchema,
});
export type Signal = z.infer<typeof signalSchema>;

export const slotResultSchema = /* @__PURE__ */ z.object({
  slotId: idSchema,
  status: /* @__PURE__ */ z.enum(['succeeded', 'failed']),
  durationMs: /* @__PURE__ */ boundedInt(0, 86_400_000),
  error: /* @__PURE__ */ z.optional(/* @__PURE__ */ shortString(messageLength)),
});

/** The serialized size of a JSON value in UTF-8 bytes (TextEncoder: the core has no Buffer). */
export function jsonBytes(value: unknown): number {
  return new TextEncoder().encode(JSON.stringify(value) ?? '').length;
}

/**
 * What a run was given, so that a proposal can be replayed on it: any JSON, at most
 * LIMITS.inputBytes serialized, with no empty key (DynamoDB cannot store one).
 */
export const executionInputValueSchema = /* @__PURE__ */ z.unknown().check(
  /* @__PURE__ */ z.refine((value) => value !== undefined && jsonBytes(value) <= inputBytes, {
    error: () =>
      `must serialize to at most ${inputBytes} bytes of JSON (16 KB): keep what the runner needs to replay the run`,
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

export const executionSchema = /* @__PURE__ */ z.object({
  id: idSchema,
  pipelineId: idSchema,
  configurationId: idSchema,
  status: /* @__PURE__ */ z.enum(['succeeded', 'failed']),
  durationMs: /* @__PURE__ */ boundedInt(0, 86_400_000),
  startedAt: timestampSchema,
  error: /* @__PURE__ */ z.optional(/* @__PURE__ */ shortString(messageLength)),
  slotResults: /* @__PURE__ */ z.optional(
    /* @__PURE__ */ z.array(slotResultSchema).check(/* @__PURE__ */ z.maxLength(slotsPerConfiguration)),
  ),
  /** What the run was given (any JSON, ≤ 16 KB), for replaying a proposal on it. */
  input: /* @__PURE__ */ z.optional(executionInputValueSchema),
});
export type Execution = z.infer<typeof executionSchema>;

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
  outputTokens: /* @__PURE__ */ minInt(0),
  attempts: /* @__PURE__ */ minInt(0),
  /** What the tokens cost at the price table's rates (core/model-pricing.ts); absent for a model it has no price for. */
  costUsd: /* @__PURE__ */ z.optional(
    /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.number().check(/* @__PURE__ */ z.gte(0))),
  ),
});

/* ---- checking a proposal before approval ---- */

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
});
export type SynthesisRun = z.infer<typeof synthesisRunSchema>;

/* ---- request bodies ---- */

export const createPipelineBodySchema = /* @__PURE__ */ z.strictObject({
  name: /* @__PURE__ */ trimmedString(1, nameLength),
  slots: slotsSchema,
});
export type CreatePipelineBody = z.infer<typeof createPipelineBodySchema>;

/*
 * Input schemas derive from the stored ones by spreading their shape: a replaced key keeps its
 * position, so this is signalSchema.omit({pipelineId}).partial({id, occurredAt}).strict() in effect,
 * without zod's omit/partial helpers in every bundle. Schemas that read a shape are built in a
 * function called once (marked pure), which a bundle not using them leaves out (see LIMITS above).
 */
export const signalInputSchema = /* @__PURE__ */ (() => {
  const { pipelineId: _pipelineId, ...signalFields } = signalSchema.shape;
  return z.strictObject({
    ...signalFields,
    id: z.optional(signalFields.id),
    occurredAt: z.optional(eventTimestampSchema),
  });
})();
export type SignalInput = z.infer<typeof signalInputSchema>;

/** Ids given in one batch must differ (with equal times they would name one item). */
function hasUniqueIds(records: Array<{ id?: string | undefined }>): boolean {
  const ids = records.flatMap((record) => (record.id === undefined ? [] : [record.id]));
  return new Set(ids).size === ids.length;
}

export const recordSignalsBodySchema = /* @__PURE__ */ z.strictObject({
  signals: /* @__PURE__ */ z
    .array(signalInputSchema)
    .check(
      /* @__PURE__ */ z.minLength(1),
      /* @__PURE__ */ z.maxLength(batchSize),
      /* @__PURE__ */ z.refine(hasUniqueIds, { message: 'signal ids in a batch must be unique' }),
    ),
});

export const executionInputSchema = /* @__PURE__ */ (() => {
  const { pipelineId: _pipelineId, ...executionFields } = executionSchema.shape;
  return z.strictObject({
    ...executionFields,
    id: z.optional(executionFields.id),
    configurationId: z.optional(executionFields.configurationId),
    startedAt: z.optional(eventTimestampSchema),
    slotResults: z.optional(
      z.array(z.strictObject(slotResultSchema.shape)).check(z.maxLength(slotsPerConfiguration)),
    ),
  });
})();
export type ExecutionInput = z.infer<typeof executionInputSchema>;

export const recordExecutionsBodySchema = /* @__PURE__ */ z.strictObject({
  executions: /* @__PURE__ */ z
    .array(executionInputSchema)
    .check(
      /* @__PURE__ */ z.minLength(1),
      /* @__PURE__ */ z.maxLength(batchSize),
      /* @__PURE__ */ z.refine(hasUniqueIds, { message: 'execution ids in a batch must be unique' }),
    ),
});

export const synthesizeBodySchema = /* @__PURE__ */ z.strictObject({
  synthesisHandler: /* @__PURE__ */ z.optional(/* @__PURE__ */ boundedString(1, 64)),
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

/** A page of a list: the cursor is opaque to callers. */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/* ---- review ---- */

export const rejectBodySchema = /* @__PURE__ */ z.strictObject({
  reason: /* @__PURE__ */ z.optional(/* @__PURE__ */ trimmedString(1, messageLength)),
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

/** One result of a runner: a case replayed on one arm. */
export const evaluationResultSchema = /* @__PURE__ */ z.strictObject({
  executionId: idSchema,
  arm: evaluationArmSchema,
  passed: /* @__PURE__ */ z.boolean(),
  score: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.number()),
  durationMs: /* @__PURE__ */ z.optional(/* @__PURE__ */ boundedNumber(0, 86_400_000)),
  costUsd: /* @__PURE__ */ z.optional(/* @__PURE__ */ boundedNumber(0, 1_000_000)),
  detail: /* @__PURE__ */ z.optional(/* @__PURE__ */ shortString(messageLength)),
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
    /* @__PURE__ */ z.maxLength(evaluationBatch),
    /* @__PURE__ */ z.refine(
      (results) => new Set(results.map((r) => `${r.executionId}#${r.arm}`)).size === results.length,
      {
        message: 'a case and arm may appear once in a batch',
      },
    ),
  ),
});

export const activateBodySchema = /* @__PURE__ */ z.strictObject({
  reason: /* @__PURE__ */ z.optional(/* @__PURE__ */ trimmedString(1, messageLength)),
});

/** How a rollout serves and judges its candidate. */
export const rolloutSettingsSchema = /* @__PURE__ */ z.strictObject({
  percent: /* @__PURE__ */ boundedInt(1, 99),
  minExecutions: /* @__PURE__ */ z.optional(/* @__PURE__ */ boundedInt(30, 100_000)),
  autoPromote: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.boolean()),
  autoRollback: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.boolean()),
});
export type RolloutSettings = z.infer<typeof rolloutSettingsSchema>;

/** The approve body: which changes, whether to rebase onto the active configuration, a rollout. */
export const approveBodySchema = /* @__PURE__ */ z.strictObject({
  changeIds: /* @__PURE__ */ z.optional(
    /* @__PURE__ */ z.array(/* @__PURE__ */ boundedString(1, 16)).check(
      /* @__PURE__ */ z.minLength(1, 'must name at least one change; leave it out to approve every change'),
      /* @__PURE__ */ z.maxLength(100),
      /* @__PURE__ */ z.refine((ids) => new Set(ids).size === ids.length, {
        message: 'must not repeat a change id',
      }),
    ),
  ),
  rebase: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.boolean()),
  rollout: /* @__PURE__ */ z.optional(rolloutSettingsSchema),
  /** An admin's reason to approve although the evaluation rules fail (never the self-approval rule). */
  override: /* @__PURE__ */ z.optional(
    /* @__PURE__ */ z.strictObject({ reason: /* @__PURE__ */ trimmedString(1, messageLength) }),
  ),
});
export type ApproveBody = z.infer<typeof approveBodySchema>;

export const endRolloutBodySchema = /* @__PURE__ */ z.strictObject({
  reason: /* @__PURE__ */ z.optional(/* @__PURE__ */ trimmedString(1, messageLength)),
});

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
});
export type Activation = z.infer<typeof activationSchema>;

/** The Idempotency-Key header: what Stripe and the IETF draft allow, printable ASCII. */
export const idempotencyKeySchema = /* @__PURE__ */ z
  .string()
  .check(
    /* @__PURE__ */ z.minLength(1),
    /* @__PURE__ */ z.maxLength(255),
    /* @__PURE__ */ z.regex(/^[\x21-\x7E]+$/, 'must be 1-255 printable ASCII characters without spaces'),
  );

/* ---- rollouts, serving and the measured effect (DESIGN.md §7) ---- */

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
