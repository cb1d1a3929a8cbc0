/**
 * One logical request of claude-v1 to the model: sent, counted in the run's usage (cache reads and
 * writes apart), and retried on transient failures while the run's time budget and retries last;
 * a refusal no retry mends fails the run with a message naming the cause.
 */
import Anthropic from '@anthropic-ai/sdk';
import { SynthesisFailure, TransientSynthesisError } from '../../core/errors.ts';
import type { SynthesisUsage } from '../../core/ports/synthesis.ts';
import { shorten } from '../text-budget.ts';
import type { RunClient } from './connection.ts';
import {
  type Attempted,
  type Backoff,
  backoffMs,
  CAUSE_TEXT,
  type Deadline,
  requestedWaitMs,
  retryableCause,
} from './retries.ts';

export type Params = Anthropic.Messages.MessageCreateParamsNonStreaming;
export type Log = (message: string, details: Record<string, unknown>) => void;

export const CLAUDE_V1_BACKOFF = { initialMs: 500, maxMs: 8_000 } as const;

const API_MESSAGE_BYTES = 300;

/** What the requests of one run share: the settings, the client, the time budget and the usage so far. */
export interface Run {
  readonly settings: {
    readonly timeBudgetMs: number;
    readonly requestTimeoutMs: number;
    readonly maxRetries: number;
    readonly backoff?: Backoff | undefined;
  };
  readonly log: Log;
  readonly deadline: Deadline;
  readonly usage: Required<Pick<SynthesisUsage, 'cacheReadInputTokens' | 'cacheWriteInputTokens'>> &
    SynthesisUsage;
  readonly client: RunClient;
}

/** What the run's errors carry: its settings (for the budget's seconds) and its usage so far. */
export type Spending = Pick<Run, 'settings' | 'usage'>;

/** One logical request: retried on transient failures while the budget and the retries last. */
export async function request(run: Run, params: Params): Promise<Anthropic.Messages.Message> {
  let last: Attempted | undefined;
  for (let retry = 0; ; ) {
    const remaining = run.deadline.remainingMs();
    if (remaining <= 0) throw budgetSpent(run, last);
    const sent = await send(run, params, remaining);
    if ('message' in sent) return sent.message;
    // The request's own timeout is the budget left, so it may fire a moment before the deadline's
    // timer: either way the budget ended this request, and the failure to report is the one before.
    const budgetEnded = run.deadline.signal.aborted || run.deadline.remainingMs() <= 0;
    if (budgetEnded) throw budgetSpent(run, last ?? { cause: 'timeout', status: undefined });
    if (sent.failure instanceof Anthropic.AuthenticationError && (await run.client.refresh())) continue;
    last = retryCause(run, sent.failure);
    const wait = waitBeforeRetry(run, last, sent.failure, retry);
    if (!(await run.deadline.wait(wait))) throw budgetSpent(run, last);
    retry += 1;
  }
}

/** One attempt, counted in the run's usage: the reply, or what went wrong. */
async function send(
  run: Run,
  params: Params,
  remainingMs: number,
): Promise<{ message: Anthropic.Messages.Message } | { failure: unknown }> {
  run.usage.attempts += 1;
  try {
    const message = await run.client.client().messages.create(params, {
      signal: run.deadline.signal,
      timeout: Math.min(run.settings.requestTimeoutMs, remainingMs),
      maxRetries: 0,
    });
    addUsage(run.usage, message.usage);
    return { message };
  } catch (failure) {
    return { failure };
  }
}

/**
 * Adds a reply's usage: inputTokens counts every input token (as the OpenTelemetry GenAI
 * conventions do), the cache reads and writes among them apart, since they are priced apart.
 */
export function addUsage(usage: Run['usage'], reported: Anthropic.Messages.Usage): void {
  const reads = reported.cache_read_input_tokens ?? 0;
  const writes = reported.cache_creation_input_tokens ?? 0;
  usage.inputTokens += reported.input_tokens + reads + writes;
  usage.cacheReadInputTokens += reads;
  usage.cacheWriteInputTokens += writes;
  usage.outputTokens += reported.output_tokens;
}

/** Why a failed attempt may be retried; throws the run's error when retrying cannot help. */
function retryCause(run: Run, failure: unknown): Attempted {
  const fault = run.client.fault(failure);
  if (fault !== undefined && 'permanent' in fault) throw runFailure(run, fault.permanent);
  const attempted = fault?.transient ?? retryableCause(failure);
  if (attempted === undefined) {
    if (failure instanceof Anthropic.APIError && failure.status !== undefined) {
      const detail = failure.apiMessage === null ? '' : `: ${shorten(failure.apiMessage, API_MESSAGE_BYTES)}`;
      throw runFailure(run, `The model API refused the request (HTTP ${failure.status}${detail}).`);
    }
    throw failure;
  }
  run.log('model request failed', {
    cause: attempted.cause,
    status: attempted.status,
    attempt: run.usage.attempts,
    remainingMs: run.deadline.remainingMs(),
  });
  return attempted;
}

/** The wait before retry number `retry + 1`; throws when the retries or the budget would run out first. */
function waitBeforeRetry(run: Run, attempted: Attempted, failure: unknown, retry: number): number {
  const what = CAUSE_TEXT[attempted.cause](attempted.status);
  if (retry >= run.settings.maxRetries) {
    throw retryLater(
      run,
      `The model API ${what} on ${retry + 1} attempt${retry === 0 ? '' : 's'} of the request.`,
    );
  }
  const asked = requestedWaitMs(failure);
  const wait = asked ?? backoffMs(run.settings.backoff ?? CLAUDE_V1_BACKOFF, retry);
  if (wait < run.deadline.remainingMs()) return wait;
  if (asked === undefined) throw budgetSpent(run, attempted);
  throw retryLater(
    run,
    `The model API ${what} and asked to retry after ${Math.ceil(asked / 1000)} s, beyond the ` +
      `${budgetSeconds(run)} s time budget of the attempt.`,
    Math.ceil(asked / 1000),
  );
}

const budgetSeconds = (run: Spending): number => Math.round(run.settings.timeBudgetMs / 100) / 10;

/** A fault that retrying will not mend (a refused key or request, an unusable reply): the run fails. */
export const runFailure = (run: Spending, message: string): SynthesisFailure =>
  new SynthesisFailure(message, { usage: { ...run.usage } });

/** A fault that may pass (rate limit, overload, 5xx, timeout): the queue retries the job later. */
const retryLater = (run: Spending, message: string, retryAfterSeconds?: number): TransientSynthesisError =>
  new TransientSynthesisError(message, {
    usage: { ...run.usage },
    ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
  });

/** The run's time budget is spent; `last` is the latest retried failure, if any. */
export const budgetSpent = (run: Spending, last: Attempted | undefined): TransientSynthesisError =>
  retryLater(
    run,
    `The model API ${last === undefined ? 'did not answer in time' : CAUSE_TEXT[last.cause](last.status)}, ` +
      `and the ${budgetSeconds(run)} s time budget of the attempt was spent after ${run.usage.attempts} ` +
      `request${run.usage.attempts === 1 ? '' : 's'}.`,
  );
