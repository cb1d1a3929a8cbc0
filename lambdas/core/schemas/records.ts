/*
 * What a pipeline records: its signals and executions as stored, and the batches a client sends
 * (ids and times the server fills in when they are left out).
 */
import * as z from 'zod/mini';
import {
  BATCH_SIZE,
  boundedInt,
  boundedString,
  emptyKeyPath,
  eventTimestampSchema,
  hasUniqueIds,
  INPUT_BYTES,
  idSchema,
  jsonBytes,
  MESSAGE_LENGTH,
  SLOTS_PER_CONFIGURATION,
  shortString,
  slotKindSchema,
  timestampSchema,
} from './common.ts';

export const severitySchema = /* @__PURE__ */ z.enum(['info', 'warning', 'critical']);
export type Severity = z.infer<typeof severitySchema>;

export const signalSchema = /* @__PURE__ */ z.object({
  id: idSchema,
  pipelineId: idSchema,
  kind: slotKindSchema,
  severity: severitySchema,
  message: /* @__PURE__ */ boundedString(1, MESSAGE_LENGTH),
  slotId: /* @__PURE__ */ z.optional(idSchema),
  executionId: /* @__PURE__ */ z.optional(idSchema),
  // z.number() refuses Infinity and NaN already (classic zod's .finite() was a no-op).
  value: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.number()),
  occurredAt: timestampSchema,
  /** Set by the server on a person's feedback (POST …/feedback): who said it, and their name then. */
  recordedBy: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
  recordedByName: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
});
export type Signal = z.infer<typeof signalSchema>;

const tokenCount = /* @__PURE__ */ boundedInt(0, 1_000_000_000);
/**
 * A stored token count: one past the bound (stored from a trace before it was checked) reads as it
 * is rather than making its execution unreadable.
 */
const storedTokenCount = /* @__PURE__ */ z.optional(
  /* @__PURE__ */ z.number().check(/* @__PURE__ */ z.gte(0)),
);

/** A slot's result as POST …/executions takes it. */
const slotResultInputShape = {
  slotId: idSchema,
  status: /* @__PURE__ */ z.enum(['succeeded', 'failed']),
  durationMs: /* @__PURE__ */ boundedInt(0, 86_400_000),
  error: /* @__PURE__ */ z.optional(/* @__PURE__ */ shortString(MESSAGE_LENGTH)),
  /** The slot's model tokens (prompt and completion), as a trace's GenAI spans report them. */
  inputTokens: /* @__PURE__ */ z.optional(tokenCount),
  outputTokens: /* @__PURE__ */ z.optional(tokenCount),
  /**
   * Input tokens read from, and written to, the provider's prompt cache, as the spans report them:
   * whether inputTokens already counts them is the emitter's (the GenAI conventions say it should).
   */
  cacheReadInputTokens: /* @__PURE__ */ z.optional(tokenCount),
  cacheWriteInputTokens: /* @__PURE__ */ z.optional(tokenCount),
};

export const slotResultSchema = /* @__PURE__ */ z.object({
  ...slotResultInputShape,
  inputTokens: storedTokenCount,
  outputTokens: storedTokenCount,
  cacheReadInputTokens: storedTokenCount,
  cacheWriteInputTokens: storedTokenCount,
});

/**
 * What a run was given, so that a proposal can be replayed on it: any JSON, at most
 * LIMITS.inputBytes serialized, with no empty key (DynamoDB cannot store one).
 */
export const executionInputValueSchema = /* @__PURE__ */ z.unknown().check(
  /* @__PURE__ */ z.refine((value) => value !== undefined && jsonBytes(value) <= INPUT_BYTES, {
    error: () =>
      `must serialize to at most ${INPUT_BYTES} bytes of JSON (16 KB): keep what the runner needs to replay the run`,
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
  error: /* @__PURE__ */ z.optional(/* @__PURE__ */ shortString(MESSAGE_LENGTH)),
  slotResults: /* @__PURE__ */ z.optional(
    /* @__PURE__ */ z.array(slotResultSchema).check(/* @__PURE__ */ z.maxLength(SLOTS_PER_CONFIGURATION)),
  ),
  /** What the run was given (any JSON, ≤ 16 KB), for replaying a proposal on it. */
  input: /* @__PURE__ */ z.optional(executionInputValueSchema),
  /** How it was recorded: `otlp` when assembled from a trace; absent (the API's) otherwise. */
  source: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.enum(['api', 'otlp'])),
});
export type Execution = z.infer<typeof executionSchema>;

/*
 * Input schemas derive from the stored ones by spreading their shape: a replaced key keeps its
 * position, so this is signalSchema.omit({pipelineId}).partial({id, occurredAt}).strict() in effect,
 * without zod's omit/partial helpers in every bundle. Schemas that read a shape are built in a
 * function called once (marked pure), which a bundle not using them leaves out (see LIMITS in common.ts).
 */
export const signalInputSchema = /* @__PURE__ */ (() => {
  // Who recorded a signal is the server's to say, never the body's.
  const {
    pipelineId: _pipelineId,
    recordedBy: _by,
    recordedByName: _name,
    ...signalFields
  } = signalSchema.shape;
  return z.strictObject({
    ...signalFields,
    id: z.optional(signalFields.id),
    occurredAt: z.optional(eventTimestampSchema),
  });
})();
export type SignalInput = z.infer<typeof signalInputSchema>;

export const recordSignalsBodySchema = /* @__PURE__ */ z.strictObject({
  signals: /* @__PURE__ */ z
    .array(signalInputSchema)
    .check(
      /* @__PURE__ */ z.minLength(1),
      /* @__PURE__ */ z.maxLength(BATCH_SIZE),
      /* @__PURE__ */ z.refine(hasUniqueIds, { message: 'signal ids in a batch must be unique' }),
    )
    ./* @__PURE__ */ register(/* @__PURE__ */ z.globalRegistry, {
      description: '1 to 100 signals; an id given appears once in the batch.',
    }),
});

export const executionInputSchema = /* @__PURE__ */ (() => {
  const { pipelineId: _pipelineId, source: _source, ...executionFields } = executionSchema.shape;
  return z.strictObject({
    ...executionFields,
    id: z.optional(executionFields.id),
    configurationId: z.optional(executionFields.configurationId),
    startedAt: z.optional(eventTimestampSchema),
    slotResults: z.optional(
      z.array(z.strictObject(slotResultInputShape)).check(z.maxLength(SLOTS_PER_CONFIGURATION)),
    ),
  });
})();
export type ExecutionInput = z.infer<typeof executionInputSchema>;

export const recordExecutionsBodySchema = /* @__PURE__ */ z.strictObject({
  executions: /* @__PURE__ */ z
    .array(executionInputSchema)
    .check(
      /* @__PURE__ */ z.minLength(1),
      /* @__PURE__ */ z.maxLength(BATCH_SIZE),
      /* @__PURE__ */ z.refine(hasUniqueIds, { message: 'execution ids in a batch must be unique' }),
    )
    ./* @__PURE__ */ register(/* @__PURE__ */ z.globalRegistry, {
      description: '1 to 100 executions; an id given appears once in the batch.',
    }),
});
