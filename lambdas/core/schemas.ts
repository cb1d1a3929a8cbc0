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

/** Server ids are nanoids; client-supplied ids share their alphabet. */
export const idSchema = z
  .string()
  .check(
    z.minLength(1),
    z.maxLength(64),
    z.regex(/^[A-Za-z0-9_-]+$/, 'must contain only A-Z, a-z, 0-9, _ and -'),
  );

export const runIdSchema = z.string().check(z.regex(/^[A-Za-z0-9_-]{21}$/, 'must be a 21-character nanoid'));

export const timestampSchema = z.iso.datetime({ offset: false });

/** How far ahead of the server's clock a client may date an event (clock skew, time zones gone wrong). */
export const MAX_FUTURE_SKEW_MS = 24 * 3_600_000;
const EARLIEST_EVENT = Date.parse('2000-01-01T00:00:00Z');

/**
 * When a client says something happened: not before 2000 and at most 24 h ahead of now, so a
 * signal dated 9999-12-31 cannot sit at the top of every "most recent" window.
 */
export const eventTimestampSchema = timestampSchema.check(
  z.refine(
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

const jsonObjectSchema = z.record(z.string(), z.unknown()).check(
  z.refine((value) => JSON.stringify(value).length <= LIMITS.settingsBytes, {
    message: `must serialize to at most ${LIMITS.settingsBytes} bytes`,
  }),
  z.check((ctx) => {
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

export const slotKindSchema = z
  .string()
  .check(
    z.minLength(1),
    z.maxLength(64),
    z.regex(/^[a-z][a-z0-9_-]*$/, 'must be lower-case, e.g. prompt, model, tool, retrieval'),
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
const knownSettingsSchema = z.looseObject({
  model: z.optional(boundedString(1, 200)),
  temperature: z.optional(boundedNumber(0, 2)),
  topP: z.optional(boundedNumber(0, 1)),
  maxTokens: z.optional(boundedInt(1, 1_000_000)),
  timeoutMs: z.optional(boundedInt(1, 3_600_000)),
  maxRetries: z.optional(boundedInt(0, 20)),
  topK: z.optional(boundedInt(1, 10_000)),
  instructions: z.optional(shortString(100_000)),
  template: z.optional(shortString(100_000)),
  responseFormat: z.optional(shortString(200)),
});

export const slotSettingsSchema = z.pipe(jsonObjectSchema, knownSettingsSchema);

export const slotSchema = z.object({
  id: idSchema,
  name: boundedString(1, LIMITS.nameLength),
  kind: slotKindSchema,
  settings: slotSettingsSchema,
});
export type Slot = z.infer<typeof slotSchema>;

const slotsSchema = z.array(slotSchema).check(
  z.minLength(1),
  z.maxLength(LIMITS.slotsPerConfiguration),
  z.refine((slots) => new Set(slots.map((slot) => slot.id)).size === slots.length, {
    message: 'slot ids must be unique',
  }),
);

/** A candidate served to part of a pipeline's traffic (DESIGN.md §7 "Rollouts"). */
export const rolloutSchema = z.object({
  id: idSchema,
  pipelineId: idSchema,
  synthesisRunId: z.string(),
  baseConfigurationId: idSchema,
  candidateConfigurationId: idSchema,
  percent: boundedInt(1, 99),
  minExecutions: boundedInt(30, 100_000),
  autoPromote: z.boolean(),
  autoRollback: z.boolean(),
  status: z.enum(['active', 'promoted', 'rolled_back']),
  startedAt: timestampSchema,
  startedBy: z.string(),
  endedAt: z.nullable(timestampSchema),
  /** A user id, or "system" when a guardrail ended it. */
  endedBy: z.nullable(z.string()),
  endReason: z.nullable(z.string()),
});
export type Rollout = z.infer<typeof rolloutSchema>;

export const pipelineSchema = z.object({
  id: idSchema,
  teamId: idSchema,
  name: boundedString(1, LIMITS.nameLength),
  activeConfigurationId: idSchema,
  createdAt: timestampSchema,
  /** The active rollout, or null; the store always answers it (optional so a new pipeline needs none). */
  rollout: z.optional(z.nullable(rolloutSchema)),
});
export type Pipeline = z.infer<typeof pipelineSchema>;

export const configurationSchema = z.object({
  id: idSchema,
  pipelineId: idSchema,
  version: minInt(1),
  slots: slotsSchema,
  source: z.enum(['manual', 'synthesis']),
  synthesisRunId: z.optional(z.string()),
  /** Set when only some of a run's changes were applied (or rebased): which ones. */
  appliedChangeIds: z.optional(z.array(z.string())),
  createdAt: timestampSchema,
  createdBy: z.string(),
});
export type Configuration = z.infer<typeof configurationSchema>;

export const severitySchema = z.enum(['info', 'warning', 'critical']);
export type Severity = z.infer<typeof severitySchema>;

export const signalSchema = z.object({
  id: idSchema,
  pipelineId: idSchema,
  kind: slotKindSchema,
  severity: severitySchema,
  message: boundedString(1, LIMITS.messageLength),
  slotId: z.optional(idSchema),
  executionId: z.optional(idSchema),
  // z.number() refuses Infinity and NaN already (classic zod's .finite() was a no-op).
  value: z.optional(z.number()),
  occurredAt: timestampSchema,
});
export type Signal = z.infer<typeof signalSchema>;

export const slotResultSchema = z.object({
  slotId: idSchema,
  status: z.enum(['succeeded', 'failed']),
  durationMs: boundedInt(0, 86_400_000),
  error: z.optional(shortString(LIMITS.messageLength)),
});

/** The serialized size of a JSON value in UTF-8 bytes (TextEncoder: the core has no Buffer). */
export function jsonBytes(value: unknown): number {
  return new TextEncoder().encode(JSON.stringify(value) ?? '').length;
}

/**
 * What a run was given, so that a proposal can be replayed on it: any JSON, at most
 * LIMITS.inputBytes serialized, with no empty key (DynamoDB cannot store one).
 */
export const executionInputValueSchema = z.unknown().check(
  z.refine((value) => value !== undefined && jsonBytes(value) <= LIMITS.inputBytes, {
    message: `must serialize to at most ${LIMITS.inputBytes} bytes of JSON (16 KB): keep what the runner needs to replay the run`,
  }),
  z.check((ctx) => {
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

export const executionSchema = z.object({
  id: idSchema,
  pipelineId: idSchema,
  configurationId: idSchema,
  status: z.enum(['succeeded', 'failed']),
  durationMs: boundedInt(0, 86_400_000),
  startedAt: timestampSchema,
  error: z.optional(shortString(LIMITS.messageLength)),
  slotResults: z.optional(z.array(slotResultSchema).check(z.maxLength(LIMITS.slotsPerConfiguration))),
  /** What the run was given (any JSON, ≤ 16 KB), for replaying a proposal on it. */
  input: z.optional(executionInputValueSchema),
});
export type Execution = z.infer<typeof executionSchema>;

export const runStatusSchema = z.enum([
  'pending',
  'generating',
  'generated',
  'approved',
  'rejected',
  'failed',
]);
export type RunStatus = z.infer<typeof runStatusSchema>;

export const confidenceSchema = z.enum(['low', 'medium', 'high']);
export type Confidence = z.infer<typeof confidenceSchema>;

export const findingSchema = z.object({
  id: z.string(),
  description: z.string(),
  signalIds: z.array(z.string()),
  /** Executions of the pipeline the finding rests on, most recent first (runs stored before they were cited read []). */
  executionIds: z._default(z.array(z.string()), () => []),
});
export type Finding = z.infer<typeof findingSchema>;
export const diagnosisSchema = z.object({ summary: z.string(), findings: z.array(findingSchema) });
export type Diagnosis = z.infer<typeof diagnosisSchema>;

export const changeSchema = z.object({
  id: z.string(),
  slotId: z.string(),
  description: z.string(),
  rationale: z.string(),
  findingIds: z.array(z.string()),
  patch: z.record(z.string(), z.unknown()),
});
export type Change = z.infer<typeof changeSchema>;

export const structuredWarningSchema = z.object({
  type: z.string(),
  message: z.string(),
  changeIds: z.optional(z.array(z.string())),
});
export type StructuredWarning = z.infer<typeof structuredWarningSchema>;

/** What generating a run cost: the model, its input and output tokens over all requests, the requests made. */
export const synthesisUsageSchema = z.object({
  model: z.string(),
  inputTokens: minInt(0),
  outputTokens: minInt(0),
  attempts: minInt(0),
  /** What the tokens cost at the price table's rates (core/model-pricing.ts); absent for a model it has no price for. */
  costUsd: z.optional(z.nullable(z.number().check(z.gte(0)))),
});

/* ---- checking a proposal before approval ---- */

export const evaluationArmSchema = z.enum(['base', 'candidate']);
export type EvaluationArm = z.infer<typeof evaluationArmSchema>;

/** The pass counts of one arm over the cases with a result on both arms. */
const armCountsSchema = z.object({ passed: minInt(0), failed: minInt(0) });

/** The stored summary of a run's evaluation, rewritten after every batch of results. */
export const evaluationSummarySchema = z.object({
  /** Cases in the evaluation set. */
  cases: minInt(0),
  /** Cases with a result on both arms. */
  evaluated: minInt(0),
  base: armCountsSchema,
  candidate: armCountsSchema,
  /** Failed on the base, passed on the candidate. */
  fixed: z.array(z.string()),
  /** Passed on the base, failed on the candidate. */
  regressed: z.array(z.string()),
  /** Candidate minus base, means over the cases reporting the figure on both arms; null when none does. */
  durationMsDelta: z.nullable(z.number()),
  costUsdDelta: z.nullable(z.number()),
  updatedAt: timestampSchema,
});
export type EvaluationSummary = z.infer<typeof evaluationSummarySchema>;

export const synthesisRunSchema = z.object({
  id: runIdSchema,
  pipelineId: idSchema,
  teamId: idSchema,
  status: runStatusSchema,
  synthesisHandler: z.string(),
  baseConfigurationId: idSchema,
  proposedConfigurationId: z.nullable(idSchema),
  explanation: z.string(),
  warnings: z.array(z.string()),
  diagnosis: z.nullable(diagnosisSchema),
  changes: z.array(changeSchema),
  structuredWarnings: z.array(structuredWarningSchema),
  confidence: z.nullable(confidenceSchema),
  analyzedSignalIds: z.array(z.string()),
  /** The executions the synthesis was shown (and its findings may cite); [] on runs stored before. */
  analyzedExecutionIds: z._default(z.array(z.string()), () => []),
  jobId: z.string(),
  errorMessage: z.nullable(z.string()),
  createdAt: timestampSchema,
  triggeredBy: z.string(),
  generationStartedAt: z.nullable(timestampSchema),
  generationCompletedAt: z.nullable(timestampSchema),
  approvedAt: z.nullable(timestampSchema),
  approvedBy: z.nullable(z.string()),
  rejectedAt: z.nullable(timestampSchema),
  rejectedBy: z.nullable(z.string()),
  /** Why the reviewer rejected the proposal, when they said. */
  rejectionReason: z._default(z.nullable(z.string()), null),
  /** Why the latest attempt is being retried, while the run is pending or generating; else null. */
  retryReason: z._default(z.nullable(z.string()), null),
  /** null until generated, and for handlers that call no model; optional so older items still read. */
  usage: z.optional(z.nullable(synthesisUsageSchema)),
  /** The replay of the proposal on recorded executions, once a runner posted results; absent before. */
  evaluation: z.optional(z.nullable(evaluationSummarySchema)),
  /** Why an admin approved against the pipeline's evaluation rules, when they did. */
  approvalOverrideReason: z.optional(z.nullable(z.string())),
  /** The changes an approval applied (null until approved). */
  approvedChangeIds: z._default(z.nullable(z.array(z.string())), null),
  /** The configuration the approval activated or rolled out (null until approved). */
  appliedConfigurationId: z._default(z.nullable(idSchema), null),
  /** The rollout the approval started, when it started one. */
  rolloutId: z._default(z.nullable(z.string()), null),
});
export type SynthesisRun = z.infer<typeof synthesisRunSchema>;

/* ---- request bodies ---- */

export const createPipelineBodySchema = z.strictObject({
  name: trimmedString(1, LIMITS.nameLength),
  slots: slotsSchema,
});
export type CreatePipelineBody = z.infer<typeof createPipelineBodySchema>;

/*
 * Input schemas derive from the stored ones by spreading their shape: a replaced key keeps its
 * position, so this is signalSchema.omit({pipelineId}).partial({id, occurredAt}).strict() in effect,
 * without zod's omit/partial helpers in every bundle.
 */
const { pipelineId: _signalPipelineId, ...signalFields } = signalSchema.shape;
export const signalInputSchema = z.strictObject({
  ...signalFields,
  id: z.optional(signalFields.id),
  occurredAt: z.optional(eventTimestampSchema),
});
export type SignalInput = z.infer<typeof signalInputSchema>;

/** Ids given in one batch must differ (with equal times they would name one item). */
function hasUniqueIds(records: Array<{ id?: string | undefined }>): boolean {
  const ids = records.flatMap((record) => (record.id === undefined ? [] : [record.id]));
  return new Set(ids).size === ids.length;
}

export const recordSignalsBodySchema = z.strictObject({
  signals: z
    .array(signalInputSchema)
    .check(
      z.minLength(1),
      z.maxLength(LIMITS.batchSize),
      z.refine(hasUniqueIds, { message: 'signal ids in a batch must be unique' }),
    ),
});

const { pipelineId: _executionPipelineId, ...executionFields } = executionSchema.shape;
export const executionInputSchema = z.strictObject({
  ...executionFields,
  id: z.optional(executionFields.id),
  configurationId: z.optional(executionFields.configurationId),
  startedAt: z.optional(eventTimestampSchema),
  slotResults: z.optional(
    z.array(z.strictObject(slotResultSchema.shape)).check(z.maxLength(LIMITS.slotsPerConfiguration)),
  ),
});
export type ExecutionInput = z.infer<typeof executionInputSchema>;

export const recordExecutionsBodySchema = z.strictObject({
  executions: z
    .array(executionInputSchema)
    .check(
      z.minLength(1),
      z.maxLength(LIMITS.batchSize),
      z.refine(hasUniqueIds, { message: 'execution ids in a batch must be unique' }),
    ),
});

export const synthesizeBodySchema = z.strictObject({
  synthesisHandler: z.optional(boundedString(1, 64)),
});

/**
 * The job message on the synthesis queue. `teamId` is also its message group, so SQS fair queues
 * keep one team's burst from delaying the others; messages sent before it was added have none.
 */
export const synthesisJobSchema = z.strictObject({
  runId: runIdSchema,
  jobId: boundedString(1, 64),
  teamId: z.optional(idSchema),
});
export type SynthesisJob = z.infer<typeof synthesisJobSchema>;

/** A page of a list: the cursor is opaque to callers. */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/* ---- review ---- */

export const rejectBodySchema = z.strictObject({
  reason: z.optional(trimmedString(1, LIMITS.messageLength)),
});

/** A pipeline's approval rules; a pipeline without stored rules has APPROVAL_RULE_DEFAULTS. */
export const approvalRulesSchema = z.strictObject({
  requireEvaluation: z.boolean(),
  maxRegressions: boundedInt(0, 1_000_000),
  minEvaluatedCases: boundedInt(0, 1_000_000),
  forbidSelfApproval: z.boolean(),
  allowApiTokens: z.boolean(),
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
export const storedApprovalRulesSchema = z.object({
  ...approvalRulesSchema.shape,
  pipelineId: idSchema,
  updatedAt: z.nullable(timestampSchema),
  updatedBy: z.nullable(z.string()),
});
export type StoredApprovalRules = z.infer<typeof storedApprovalRulesSchema>;

/** One result of a runner: a case replayed on one arm. */
export const evaluationResultSchema = z.strictObject({
  executionId: idSchema,
  arm: evaluationArmSchema,
  passed: z.boolean(),
  score: z.optional(z.number()),
  durationMs: z.optional(boundedNumber(0, 86_400_000)),
  costUsd: z.optional(boundedNumber(0, 1_000_000)),
  detail: z.optional(shortString(LIMITS.messageLength)),
});
export type EvaluationResult = z.infer<typeof evaluationResultSchema>;

/** A stored result, with when it arrived. */
export const storedEvaluationResultSchema = z.object({
  ...evaluationResultSchema.shape,
  recordedAt: timestampSchema,
});
export type StoredEvaluationResult = z.infer<typeof storedEvaluationResultSchema>;

/** One case of a run's evaluation set: an execution, why it was chosen, and what it was given. */
export const evaluationCaseSchema = z.object({
  executionId: idSchema,
  reason: z.enum(['cited', 'failed', 'succeeded']),
  status: z.enum(['succeeded', 'failed']),
  startedAt: timestampSchema,
  error: z.optional(z.string()),
  input: z.optional(z.unknown()),
  /** The latest result of each arm posted so far (absent before any). */
  results: z.optional(
    z.object({
      base: z.optional(storedEvaluationResultSchema),
      candidate: z.optional(storedEvaluationResultSchema),
    }),
  ),
});
export type EvaluationCase = z.infer<typeof evaluationCaseSchema>;

export const evaluationSetSchema = z.object({
  runId: runIdSchema,
  baseConfiguration: configurationSchema,
  candidateConfiguration: configurationSchema,
  cases: z.array(evaluationCaseSchema),
  /** When the set was chosen (it never changes after). */
  chosenAt: timestampSchema,
});
export type EvaluationSet = z.infer<typeof evaluationSetSchema>;

export const recordEvaluationsBodySchema = z.strictObject({
  results: z.array(evaluationResultSchema).check(
    z.minLength(1),
    z.maxLength(LIMITS.evaluationBatch),
    z.refine((results) => new Set(results.map((r) => `${r.executionId}#${r.arm}`)).size === results.length, {
      message: 'a case and arm may appear once in a batch',
    }),
  ),
});

export const activateBodySchema = z.strictObject({
  reason: z.optional(trimmedString(1, LIMITS.messageLength)),
});

/** How a rollout serves and judges its candidate. */
export const rolloutSettingsSchema = z.strictObject({
  percent: boundedInt(1, 99),
  minExecutions: z.optional(boundedInt(30, 100_000)),
  autoPromote: z.optional(z.boolean()),
  autoRollback: z.optional(z.boolean()),
});
export type RolloutSettings = z.infer<typeof rolloutSettingsSchema>;

/** The approve body: which changes, whether to rebase onto the active configuration, a rollout. */
export const approveBodySchema = z.strictObject({
  changeIds: z.optional(
    z.array(boundedString(1, 16)).check(
      z.minLength(1, 'must name at least one change; leave it out to approve every change'),
      z.maxLength(100),
      z.refine((ids) => new Set(ids).size === ids.length, { message: 'must not repeat a change id' }),
    ),
  ),
  rebase: z.optional(z.boolean()),
  rollout: z.optional(rolloutSettingsSchema),
  /** An admin's reason to approve although the evaluation rules fail (never the self-approval rule). */
  override: z.optional(z.strictObject({ reason: trimmedString(1, LIMITS.messageLength) })),
});
export type ApproveBody = z.infer<typeof approveBodySchema>;

export const endRolloutBodySchema = z.strictObject({
  reason: z.optional(trimmedString(1, LIMITS.messageLength)),
});

/** One change of a pipeline's active configuration: the history a reviewer reads. */
export const activationSchema = z.object({
  id: idSchema,
  pipelineId: idSchema,
  configurationId: idSchema,
  version: minInt(1),
  previousConfigurationId: idSchema,
  previousVersion: minInt(1),
  source: z.enum(['approval', 'rollback', 'rollout']),
  synthesisRunId: z.nullable(z.string()),
  reason: z.nullable(z.string()),
  /** e.g. "Restored version 1 (replacing version 3)" or "Approved synthesis run … (version 2)". */
  summary: z.string(),
  activatedAt: timestampSchema,
  activatedBy: z.string(),
});
export type Activation = z.infer<typeof activationSchema>;

/** The Idempotency-Key header: what Stripe and the IETF draft allow, printable ASCII. */
export const idempotencyKeySchema = z
  .string()
  .check(
    z.minLength(1),
    z.maxLength(255),
    z.regex(/^[\x21-\x7E]+$/, 'must be 1-255 printable ASCII characters without spaces'),
  );

/* ---- rollouts, serving and the measured effect (DESIGN.md §7) ---- */

/** What serving reads in one GetItem; kept in step with the pipeline item by the same transactions. */
export const servingStateSchema = z.object({
  pipelineId: idSchema,
  teamId: idSchema,
  active: configurationSchema,
  rollout: z.nullable(z.object({ id: idSchema, percent: boundedInt(1, 99), candidate: configurationSchema })),
});
export type ServingState = z.infer<typeof servingStateSchema>;

export const servingConfigurationSchema = z.object({
  configuration: configurationSchema,
  arm: z.enum(['active', 'candidate']),
  rolloutId: z.nullable(z.string()),
});

/** A routing key: a user or conversation id, 1–256 characters. */
export const routingKeySchema = boundedString(1, 256);

const durationsSchema = z.nullable(z.object({ p50: z.number(), p95: z.number() }));
const slotArmSchema = z.object({
  executions: z.int(),
  failed: z.int(),
  failureRate: z.nullable(z.number()),
  durationMs: durationsSchema,
});
const armSchema = z.object({
  ...slotArmSchema.shape,
  signals: z.object({ info: z.int(), warning: z.int(), critical: z.int() }),
  from: z.nullable(timestampSchema),
  to: z.nullable(timestampSchema),
});

export type Effect = z.infer<typeof effectSchema>;
export const effectSchema = z.object({
  runId: z.string(),
  mode: z.enum(['rollout', 'before_after']),
  rolloutId: z.nullable(z.string()),
  baseConfigurationId: z.string(),
  appliedConfigurationId: z.string(),
  arms: z.object({ base: armSchema, applied: armSchema }),
  slots: z.array(z.object({ slotId: z.string(), base: slotArmSchema, applied: slotArmSchema })),
  /** Applied minus base; null while an arm has no execution. */
  failureRate: z.nullable(
    z.object({ difference: z.number(), ci95: z.tuple([z.number(), z.number()]), pValue: z.number() }),
  ),
  verdict: z.enum(['improved', 'worse', 'no_significant_change', 'not_enough_data']),
  minExecutions: z.int(),
  measuredAt: timestampSchema,
});
