/**
 * claude-v1, the client adapter: asks Claude for the synthesis through one forced tool call, retries
 * transient API failures within the run's time budget, and hands the checked draft to finalizeProposal.
 */
import Anthropic from '@anthropic-ai/sdk';
import { SynthesisFailure, TransientSynthesisError } from '../../core/errors.ts';
import type {
  SynthesisContext,
  SynthesisEngine,
  SynthesisProposal,
  SynthesisUsage,
} from '../../core/ports/synthesis.ts';
import { finalizeProposal } from '../finalize.ts';
import { shorten } from '../text-budget.ts';
import { buildSynthesisPrompt } from './prompt.ts';
import {
  type Attempted,
  type Backoff,
  backoffMs,
  CAUSE_TEXT,
  Deadline,
  requestedWaitMs,
  retryableCause,
} from './retries.ts';
import {
  assistantTurn,
  checkReply,
  repairTurn,
  SUBMIT_SYNTHESIS_TOOL,
  SUBMIT_SYNTHESIS_TOOL_NAME,
  withoutPlaceholderPatches,
} from './tool.ts';

/** Where the API key comes from; `refresh` is called once per run when the API answers 401. */
export interface ApiKeySource {
  /** Names where the key is configured, for error messages; never the key. */
  readonly description: string;
  get(signal?: AbortSignal): Promise<string>;
  refresh(signal?: AbortSignal): Promise<string>;
}

export interface ClaudeV1Options {
  /** Undefined when no key is configured: runs that name claude-v1 then fail with a clear message. */
  keys: ApiKeySource | undefined;
  baseURL?: string | undefined;
  model: string;
  maxTokens: number;
  /** For every request, retry and wait of one run together. */
  timeBudgetMs: number;
  requestTimeoutMs: number;
  /** Retries of one request after a rate limit, overload, server error, timeout or dropped connection. */
  maxRetries: number;
  /** Exponential backoff between retries when the API names no wait (retry-after). */
  backoff?: Backoff;
  /** Structured events (attempt failures, usage); never given the key or the prompt. */
  log?: Log;
}

type Log = (message: string, details: Record<string, unknown>) => void;

export const CLAUDE_V1_BACKOFF = { initialMs: 500, maxMs: 8_000 } as const;

const API_MESSAGE_BYTES = 300;

const NOT_CONFIGURED =
  'claude-v1 is not configured: no Anthropic API key (set ANTHROPIC_API_KEY locally, or ' +
  'ANTHROPIC_SECRET_ARN on AWS). Start the run with synthesisHandler "heuristic-v1" instead.';

/**
 * Usage under log-safe names: the logger redacts every key that contains "token", which would
 * hide inputTokens and outputTokens.
 */
const costOf = (usage: SynthesisUsage) => ({
  model: usage.model,
  input: usage.inputTokens,
  output: usage.outputTokens,
  attempts: usage.attempts,
});

/** What the requests of one run share: the engine's options, its time budget and its usage so far. */
interface Run {
  readonly options: ClaudeV1Options;
  readonly keys: ApiKeySource;
  readonly client: (key: string) => Anthropic;
  readonly log: Log;
  readonly deadline: Deadline;
  readonly usage: SynthesisUsage;
}

type Params = Anthropic.Messages.MessageCreateParamsNonStreaming;

/**
 * Creates the claude-v1 engine; its Anthropic client is built on first use and kept while the key is.
 * One repair round-trip follows a reply that fails the draft schema. When the budget is spent, or a
 * request is refused, the run fails with a message naming the cause.
 */
export function createClaudeV1(options: ClaudeV1Options): SynthesisEngine {
  const client = clientCache(options);
  const log = options.log ?? (() => undefined);

  const generate = async (context: SynthesisContext): Promise<SynthesisProposal> => {
    const keys = options.keys;
    if (keys === undefined) throw new SynthesisFailure(NOT_CONFIGURED);
    const prompt = buildSynthesisPrompt(context);
    const usage: SynthesisUsage = { model: options.model, inputTokens: 0, outputTokens: 0, attempts: 0 };
    return Deadline.within(options.timeBudgetMs, async (deadline) => {
      const run: Run = { options, keys, client, log, deadline, usage };
      try {
        return await synthesize(run, context, prompt);
      } catch (error) {
        logSettled(run, error);
        throw error;
      }
    });
  };

  return { name: 'claude-v1', generate };
}

/** The Anthropic client for a key: one is kept, and rebuilt when the key changes. */
function clientCache(options: ClaudeV1Options): (key: string) => Anthropic {
  let client: { key: string; anthropic: Anthropic } | undefined;
  return (key) => {
    if (client?.key !== key) {
      client = {
        key,
        // Retries are ours (request), so that they share the run's budget and are counted.
        anthropic: new Anthropic({
          apiKey: key,
          authToken: null,
          baseURL: options.baseURL ?? null,
          maxRetries: 0,
          timeout: options.requestTimeoutMs,
        }),
      };
    }
    return client.anthropic;
  };
}

/** Drafts with the model, checks the draft and turns it into the proposal, with what the run cost. */
async function synthesize(
  run: Run,
  context: SynthesisContext,
  prompt: ReturnType<typeof buildSynthesisPrompt>,
): Promise<SynthesisProposal> {
  const key = await readRunKey(run);
  const { draft, warnings } = withoutPlaceholderPatches(await draftFromModel(run, key, prompt));
  const proposal = finalizeProposal(draft, {
    shownSignals: prompt.shownSignals,
    shownExecutions: prompt.shownExecutions,
    executionsInWindow: context.executions,
    baseConfiguration: context.baseConfiguration,
    allSignalsInWindow: context.signals,
  });
  run.log('model synthesis generated', {
    cost: costOf(run.usage),
    estimatedPromptSize: prompt.estimatedTokens,
  });
  return {
    ...proposal,
    structuredWarnings: [...warnings, ...proposal.structuredWarnings],
    usage: { ...run.usage },
  };
}

/** Logs why a run failed or goes back to the queue; other errors are logged by the worker. */
function logSettled(run: Run, error: unknown): void {
  if (error instanceof SynthesisFailure || error instanceof TransientSynthesisError) {
    run.log(
      error instanceof SynthesisFailure ? 'model synthesis failed' : 'model synthesis will be retried',
      {
        cost: costOf(run.usage),
        reason: error.message,
      },
    );
  }
}

/** The model's draft: asked for once, and once more with the schema errors when the reply fails them. */
async function draftFromModel(run: Run, key: RunKey, prompt: ReturnType<typeof buildSynthesisPrompt>) {
  const base: Params = {
    model: run.options.model,
    max_tokens: run.options.maxTokens,
    system: prompt.system,
    tools: [SUBMIT_SYNTHESIS_TOOL],
    tool_choice: { type: 'tool', name: SUBMIT_SYNTHESIS_TOOL_NAME },
    messages: [{ role: 'user', content: prompt.user }],
  };
  const first = await request(run, key, base);
  const checked = checkReply(first, run.options.maxTokens);
  if (checked.ok) return checked.draft;
  run.log('model reply failed validation; asking for a repair', { errors: checked.errors.length });
  const previous = assistantTurn(first);
  const repaired = await request(run, key, {
    ...base,
    messages: [
      ...base.messages,
      ...(previous === undefined ? [] : [previous]),
      repairTurn(first, checked.errors),
    ],
  });
  const rechecked = checkReply(repaired, run.options.maxTokens);
  if (rechecked.ok) return rechecked.draft;
  throw runFailure(
    run,
    `The model's reply did not match the ${SUBMIT_SYNTHESIS_TOOL_NAME} schema, even after one repair ` +
      `attempt: ${shorten(rechecked.errors.slice(0, 3).join('; '), 600)}`,
  );
}

/** The run's API key: read within the budget, and read again at most once, after a 401. */
interface RunKey {
  current(): string;
  /** Reads the key again, once per run; true when that gave a different key to try. */
  refresh(): Promise<boolean>;
}

async function readRunKey(run: Run): Promise<RunKey> {
  let key = await readKeyWithin(run, (signal) => run.keys.get(signal));
  let refreshed = false;
  return {
    current: () => key,
    async refresh() {
      if (refreshed) return false;
      refreshed = true;
      const stale = key;
      key = await readKeyWithin(run, (signal) => run.keys.refresh(signal));
      return key !== stale;
    },
  };
}

/** Reads the key within the budget: a read cut short by the deadline fails the run like a slow API. */
async function readKeyWithin(run: Run, read: (signal: AbortSignal) => Promise<string>): Promise<string> {
  try {
    return await read(run.deadline.signal);
  } catch (error) {
    if (run.deadline.signal.aborted) throw budgetSpent(run, undefined);
    throw error;
  }
}

/** One logical request: retried on transient failures while the budget and the retries last. */
async function request(run: Run, key: RunKey, params: Params): Promise<Anthropic.Messages.Message> {
  let last: Attempted | undefined;
  for (let retry = 0; ; ) {
    const remaining = run.deadline.remainingMs();
    if (remaining <= 0) throw budgetSpent(run, last);
    const sent = await send(run, key.current(), params, remaining);
    if ('message' in sent) return sent.message;
    // The request's own timeout is the budget left, so it may fire a moment before the deadline's
    // timer: either way the budget ended this request, and the failure to report is the one before.
    const budgetEnded = run.deadline.signal.aborted || run.deadline.remainingMs() <= 0;
    if (budgetEnded) throw budgetSpent(run, last ?? { cause: 'timeout', status: undefined });
    if (sent.failure instanceof Anthropic.AuthenticationError) {
      // The secret may have been rotated since it was cached: read it again, once per run.
      if (await key.refresh()) continue;
      throw runFailure(
        run,
        `The model API rejected the API key (HTTP 401); store a valid key in ${run.keys.description} ` +
          'and start a new run.',
      );
    }
    last = retryCause(run, sent.failure);
    const wait = waitBeforeRetry(run, last, sent.failure, retry);
    if (!(await run.deadline.wait(wait))) throw budgetSpent(run, last);
    retry += 1;
  }
}

/** One attempt, counted in the run's usage: the reply, or what went wrong. */
async function send(
  run: Run,
  key: string,
  params: Params,
  remainingMs: number,
): Promise<{ message: Anthropic.Messages.Message } | { failure: unknown }> {
  run.usage.attempts += 1;
  try {
    const message = await run.client(key).messages.create(params, {
      signal: run.deadline.signal,
      timeout: Math.min(run.options.requestTimeoutMs, remainingMs),
      maxRetries: 0,
    });
    run.usage.inputTokens +=
      message.usage.input_tokens +
      (message.usage.cache_creation_input_tokens ?? 0) +
      (message.usage.cache_read_input_tokens ?? 0);
    run.usage.outputTokens += message.usage.output_tokens;
    return { message };
  } catch (failure) {
    return { failure };
  }
}

/** Why a failed attempt may be retried; throws the run's error when retrying cannot help. */
function retryCause(run: Run, failure: unknown): Attempted {
  const attempted = retryableCause(failure);
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
  if (retry >= run.options.maxRetries) {
    throw retryLater(
      run,
      `The model API ${what} on ${retry + 1} attempt${retry === 0 ? '' : 's'} of the request.`,
    );
  }
  const asked = requestedWaitMs(failure);
  const wait = asked ?? backoffMs(run.options.backoff ?? CLAUDE_V1_BACKOFF, retry);
  if (wait < run.deadline.remainingMs()) return wait;
  if (asked === undefined) throw budgetSpent(run, attempted);
  throw retryLater(
    run,
    `The model API ${what} and asked to retry after ${Math.ceil(asked / 1000)} s, beyond the ` +
      `${budgetSeconds(run)} s time budget of the attempt.`,
    Math.ceil(asked / 1000),
  );
}

const budgetSeconds = (run: Run): number => Math.round(run.options.timeBudgetMs / 100) / 10;

/** A fault that retrying will not mend (a refused key or request, an unusable reply): the run fails. */
const runFailure = (run: Run, message: string): SynthesisFailure =>
  new SynthesisFailure(message, { usage: { ...run.usage } });

/** A fault that may pass (rate limit, overload, 5xx, timeout): the queue retries the job later. */
const retryLater = (run: Run, message: string, retryAfterSeconds?: number): TransientSynthesisError =>
  new TransientSynthesisError(message, {
    usage: { ...run.usage },
    ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
  });

/** The run's time budget is spent; `last` is the latest retried failure, if any. */
const budgetSpent = (run: Run, last: Attempted | undefined): TransientSynthesisError =>
  retryLater(
    run,
    `The model API ${last === undefined ? 'did not answer in time' : CAUSE_TEXT[last.cause](last.status)}, ` +
      `and the ${budgetSeconds(run)} s time budget of the attempt was spent after ${run.usage.attempts} ` +
      `request${run.usage.attempts === 1 ? '' : 's'}.`,
  );
