import { z } from 'zod';

/** Limits every edge enforces; documented in the README. */
export const LIMITS = {
  batchSize: 100,
  slotsPerConfiguration: 50,
  nameLength: 200,
  messageLength: 4_000,
  settingsBytes: 16_000,
  bodyBytes: 1_000_000,
  pageSize: 100,
} as const;

/** Server ids are nanoids; client-supplied ids share their alphabet. */
export const idSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9_-]+$/, 'must contain only A-Z, a-z, 0-9, _ and -');

export const runIdSchema = z.string().regex(/^[A-Za-z0-9_-]{21}$/, 'must be a 21-character nanoid');

export const timestampSchema = z.iso.datetime({ offset: false });

const jsonObjectSchema = z
  .record(z.string(), z.unknown())
  .refine((value) => JSON.stringify(value).length <= LIMITS.settingsBytes, {
    message: `must serialize to at most ${LIMITS.settingsBytes} bytes`,
  });

export const slotKindSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[a-z][a-z0-9_-]*$/, 'must be lower-case, e.g. prompt, model, tool, retrieval');

/**
 * Settings the API understands, per slot kind. Other keys pass through untouched; a known key with
 * a wrong type is refused, so neither a user nor a synthesis can store a broken model slot.
 */
const knownSettingsSchema = z.looseObject({
  model: z.string().min(1).max(200).optional(),
  temperature: z.number().min(0).max(2).optional(),
  topP: z.number().min(0).max(1).optional(),
  maxTokens: z.number().int().min(1).max(1_000_000).optional(),
  timeoutMs: z.number().int().min(1).max(3_600_000).optional(),
  maxRetries: z.number().int().min(0).max(20).optional(),
  topK: z.number().int().min(1).max(10_000).optional(),
  instructions: z.string().max(100_000).optional(),
  template: z.string().max(100_000).optional(),
  responseFormat: z.string().max(200).optional(),
});

export const slotSettingsSchema = jsonObjectSchema.pipe(knownSettingsSchema);

export const slotSchema = z.object({
  id: idSchema,
  name: z.string().min(1).max(LIMITS.nameLength),
  kind: slotKindSchema,
  settings: slotSettingsSchema,
});
export type Slot = z.infer<typeof slotSchema>;

const slotsSchema = z
  .array(slotSchema)
  .min(1)
  .max(LIMITS.slotsPerConfiguration)
  .refine((slots) => new Set(slots.map((slot) => slot.id)).size === slots.length, {
    message: 'slot ids must be unique',
  });

export const pipelineSchema = z.object({
  id: idSchema,
  teamId: idSchema,
  name: z.string().min(1).max(LIMITS.nameLength),
  activeConfigurationId: idSchema,
  createdAt: timestampSchema,
});
export type Pipeline = z.infer<typeof pipelineSchema>;

export const configurationSchema = z.object({
  id: idSchema,
  pipelineId: idSchema,
  version: z.number().int().min(1),
  slots: slotsSchema,
  source: z.enum(['manual', 'synthesis']),
  synthesisRunId: z.string().optional(),
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
  message: z.string().min(1).max(LIMITS.messageLength),
  slotId: idSchema.optional(),
  executionId: idSchema.optional(),
  value: z.number().finite().optional(),
  occurredAt: timestampSchema,
});
export type Signal = z.infer<typeof signalSchema>;

export const slotResultSchema = z.object({
  slotId: idSchema,
  status: z.enum(['succeeded', 'failed']),
  durationMs: z.number().int().min(0).max(86_400_000),
  error: z.string().max(LIMITS.messageLength).optional(),
});

export const executionSchema = z.object({
  id: idSchema,
  pipelineId: idSchema,
  configurationId: idSchema,
  status: z.enum(['succeeded', 'failed']),
  durationMs: z.number().int().min(0).max(86_400_000),
  startedAt: timestampSchema,
  error: z.string().max(LIMITS.messageLength).optional(),
  slotResults: z.array(slotResultSchema).max(LIMITS.slotsPerConfiguration).optional(),
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
});
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
  changeIds: z.array(z.string()).optional(),
});
export type StructuredWarning = z.infer<typeof structuredWarningSchema>;

/** What generating a run cost: the model, its input and output tokens over all requests, the requests made. */
export const synthesisUsageSchema = z.object({
  model: z.string(),
  inputTokens: z.number().int().min(0),
  outputTokens: z.number().int().min(0),
  attempts: z.number().int().min(0),
});

export const synthesisRunSchema = z.object({
  id: runIdSchema,
  pipelineId: idSchema,
  teamId: idSchema,
  status: runStatusSchema,
  synthesisHandler: z.string(),
  baseConfigurationId: idSchema,
  proposedConfigurationId: idSchema.nullable(),
  explanation: z.string(),
  warnings: z.array(z.string()),
  diagnosis: diagnosisSchema.nullable(),
  changes: z.array(changeSchema),
  structuredWarnings: z.array(structuredWarningSchema),
  confidence: confidenceSchema.nullable(),
  analyzedSignalIds: z.array(z.string()),
  jobId: z.string(),
  errorMessage: z.string().nullable(),
  createdAt: timestampSchema,
  triggeredBy: z.string(),
  generationStartedAt: timestampSchema.nullable(),
  generationCompletedAt: timestampSchema.nullable(),
  approvedAt: timestampSchema.nullable(),
  approvedBy: z.string().nullable(),
  rejectedAt: timestampSchema.nullable(),
  rejectedBy: z.string().nullable(),
  /** Why the reviewer rejected the proposal, when they said. */
  rejectionReason: z.string().nullable().default(null),
  /** null until generated, and for handlers that call no model; optional so older items still read. */
  usage: synthesisUsageSchema.nullable().optional(),
});
export type SynthesisRun = z.infer<typeof synthesisRunSchema>;

/* ---- request bodies ---- */

export const createPipelineBodySchema = z.strictObject({
  name: z.string().trim().min(1).max(LIMITS.nameLength),
  slots: slotsSchema,
});
export type CreatePipelineBody = z.infer<typeof createPipelineBodySchema>;

export const signalInputSchema = signalSchema
  .omit({ pipelineId: true })
  .partial({ id: true, occurredAt: true })
  .strict();
export type SignalInput = z.infer<typeof signalInputSchema>;

/** Ids given in one batch must differ (with equal times they would name one item). */
function hasUniqueIds(records: Array<{ id?: string | undefined }>): boolean {
  const ids = records.flatMap((record) => (record.id === undefined ? [] : [record.id]));
  return new Set(ids).size === ids.length;
}

export const recordSignalsBodySchema = z.strictObject({
  signals: z
    .array(signalInputSchema)
    .min(1)
    .max(LIMITS.batchSize)
    .refine(hasUniqueIds, { message: 'signal ids in a batch must be unique' }),
});

export const executionInputSchema = executionSchema
  .omit({ pipelineId: true })
  .partial({ id: true, startedAt: true, configurationId: true })
  .extend({ slotResults: z.array(slotResultSchema.strict()).max(LIMITS.slotsPerConfiguration).optional() })
  .strict();
export type ExecutionInput = z.infer<typeof executionInputSchema>;

export const recordExecutionsBodySchema = z.strictObject({
  executions: z
    .array(executionInputSchema)
    .min(1)
    .max(LIMITS.batchSize)
    .refine(hasUniqueIds, { message: 'execution ids in a batch must be unique' }),
});

export const synthesizeBodySchema = z.strictObject({
  synthesisHandler: z.string().min(1).max(64).optional(),
});

/** The job message on the synthesis queue. */
export const synthesisJobSchema = z.strictObject({ runId: runIdSchema, jobId: z.string().min(1).max(64) });
export type SynthesisJob = z.infer<typeof synthesisJobSchema>;

/** A page of a list: the cursor is opaque to callers. */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/* ---- review ---- */

export const rejectBodySchema = z.strictObject({
  reason: z.string().trim().min(1).max(LIMITS.messageLength).optional(),
});

export const activateBodySchema = z.strictObject({
  reason: z.string().trim().min(1).max(LIMITS.messageLength).optional(),
});

/** One change of a pipeline's active configuration: the history a reviewer reads. */
export const activationSchema = z.object({
  id: idSchema,
  pipelineId: idSchema,
  configurationId: idSchema,
  version: z.number().int().min(1),
  previousConfigurationId: idSchema,
  previousVersion: z.number().int().min(1),
  source: z.enum(['approval', 'rollback']),
  synthesisRunId: z.string().nullable(),
  reason: z.string().nullable(),
  /** e.g. "Restored version 1 (replacing version 3)" or "Approved synthesis run … (version 2)". */
  summary: z.string(),
  activatedAt: timestampSchema,
  activatedBy: z.string(),
});
export type Activation = z.infer<typeof activationSchema>;

/** The Idempotency-Key header: what Stripe and the IETF draft allow, printable ASCII. */
export const idempotencyKeySchema = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[\x21-\x7E]+$/, 'must be 1-255 printable ASCII characters without spaces');
