/*
 * The records a trace gives pass the same rules as POST …/executions and POST …/signals: each span
 * is checked when it arrives (before it is staged: a span that could never become a storable
 * record is refused, not kept to fail every later request of its trace), and each assembled record
 * is parsed by the JSON endpoints' schemas before it is recorded. Pure: reasons, never throws.
 */
import type * as z from 'zod/mini';
import { ValidationError } from '../errors.ts';
import { executionInputSchema, executionInputValueSchema, signalInputSchema } from '../schemas/records.ts';
import { assertStorableJson, isInvalidText, isStorableNumber } from '../schemas/storable.ts';
import type { AssembledTrace, TraceExecution, TraceSignal } from './assemble.ts';
import {
  type Attributes,
  INPUT_ATTRIBUTES,
  TOKEN_ATTRIBUTES,
  TOKENS_MAX,
  type TraceSpan,
  WRITE_BOUNDS,
} from './spans.ts';

export const SCORE_ATTRIBUTE = 'gen_ai.evaluation.score.value';

/** Whether a text of the attributes (a key, a value, an array's item) holds NUL or an unpaired surrogate. */
function hasInvalidText(attributes: Attributes): boolean {
  for (const key in attributes) {
    if (isInvalidText(key)) return true;
    const value = attributes[key];
    if (typeof value === 'string') {
      if (isInvalidText(value)) return true;
    } else if (Array.isArray(value)) {
      for (const item of value) if (isInvalidText(item)) return true;
    }
  }
  return false;
}

/** Whether any text of a span as read (its name, status message, attributes, events') is invalid. */
function spanHasInvalidText(span: TraceSpan): boolean {
  if (isInvalidText(span.name) || (span.statusMessage !== undefined && isInvalidText(span.statusMessage))) {
    return true;
  }
  if (hasInvalidText(span.attributes)) return true;
  for (const event of span.events) {
    if (isInvalidText(event.name) || hasInvalidText(event.attributes)) return true;
  }
  return false;
}

/** The JSON an input attribute holds, when it is JSON (else it is kept as text). */
function parsedInput(text: string): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    return undefined;
  }
}

/** Why the input would not pass POST …/executions (nesting, numbers, empty keys), if it would not. */
function inputIssue(attributes: Attributes): string | undefined {
  for (const name of INPUT_ATTRIBUTES) {
    const raw = attributes[name];
    if (typeof raw !== 'string') continue;
    const parsed = parsedInput(raw);
    if (!parsed) continue;
    // Checked as the execution's input would be: inside its body, at its depth.
    const issue = issueOf({ executions: [{ input: parsed.value }] }, executionInputValueSchema, parsed.value);
    if (issue) return `${name}: ${issue}`;
  }
  return undefined;
}

/** Why a span can never give a storable record, or undefined: the reason its refusal names. */
export function spanIssue(span: TraceSpan): string | undefined {
  if (spanHasInvalidText(span)) return 'a span text holds a NUL character or an unpaired surrogate';
  for (const name of TOKEN_ATTRIBUTES) {
    const tokens = span.attributes[name];
    if (typeof tokens === 'number' && !(tokens >= 0 && tokens <= TOKENS_MAX)) {
      return `token counts (${name}) must be from 0 to ${TOKENS_MAX}`;
    }
  }
  for (const event of span.events) {
    const score = event.attributes[SCORE_ATTRIBUTE];
    if (typeof score === 'number' && !isStorableNumber(score)) {
      return `an evaluation score (${SCORE_ATTRIBUTE}) must be 0 or have a magnitude from 1e-130 to below 1e126`;
    }
  }
  return inputIssue(span.attributes);
}

/** The first issue of a value under a JSON endpoint's body schema, as that endpoint words it. */
function issueOf(body: unknown, schema: z.ZodMiniType, element: unknown): string | undefined {
  try {
    assertStorableJson(body);
  } catch (error) {
    if (error instanceof ValidationError) return error.message;
    throw error;
  }
  const parsed = schema.safeParse(element);
  if (parsed.success) return undefined;
  const [first] = parsed.error.issues;
  return first ? `${first.path.join('.') || 'the record'} ${first.message}` : 'does not pass its schema';
}

/** Why an execution would be refused by POST …/executions, or undefined. */
export function executionIssue(execution: TraceExecution): string | undefined {
  return issueOf({ executions: [execution] }, executionInputSchema, execution);
}

/** Why a signal would be refused by POST …/signals, or undefined. */
export function signalIssue(signal: TraceSignal): string | undefined {
  return issueOf({ signals: [signal] }, signalInputSchema, signal);
}

/** A trace's records as the JSON endpoints would take them: why the execution is refused, the signals kept. */
export function checkRecords(trace: AssembledTrace): {
  issue?: string;
  signals: TraceSignal[];
  refused: string[];
} {
  const issue = executionIssue(trace.execution);
  if (issue) return { issue, signals: [], refused: [] };
  const signals: TraceSignal[] = [];
  const refused: string[] = [];
  for (const signal of trace.signals) {
    const problem = signalIssue(signal);
    if (problem) refused.push(problem);
    else signals.push(signal);
  }
  return { signals, refused };
}

/** The signals a span may give: its evaluation events, and itself when it failed. */
export const signalsOfSpan = (span: TraceSpan) =>
  (span.status === 'error' ? 1 : 0) +
  span.events.filter((event) => event.name === 'gen_ai.evaluation.result').length;

/** The 413's message when a request's spans would store past WRITE_BOUNDS, or undefined. */
export function writeBoundExcess(traces: number, signals: number, bytes: number): string | undefined {
  const over =
    traces > WRITE_BOUNDS.traces
      ? `${traces} traces; at most ${WRITE_BOUNDS.traces} traces`
      : signals > WRITE_BOUNDS.signals
        ? `${signals} signals (evaluation events and failed spans); at most ${WRITE_BOUNDS.signals}`
        : bytes > WRITE_BOUNDS.bytes
          ? `${(bytes / 1024 / 1024).toFixed(1)} MB of spans as read; at most ${WRITE_BOUNDS.bytes / 1024 / 1024} MB`
          : undefined;
  return (
    over &&
    `This request would store ${over} are stored from one OTLP request: send smaller batches. Nothing was stored.`
  );
}
