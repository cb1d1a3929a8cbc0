/**
 * claude-v1, the client adapter: asks Claude for the synthesis through one forced tool call, retries
 * transient API failures within the run's time budget, and hands the checked draft to finalizeProposal.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import Anthropic from '@anthropic-ai/sdk';
import { SynthesisFailure, TransientSynthesisError } from '../../core/errors.ts';
import type {
  SynthesisContext,
  SynthesisEngine,
  SynthesisProposal,
  SynthesisUsage,
} from '../../core/ports.ts';
import { finalizeProposal } from '../finalize.ts';
import { shorten } from '../text-budget.ts';
import { buildSynthesisPrompt } from './prompt.ts';
import { type Attempted, CAUSE_TEXT, Deadline, requestedWaitMs, retryableCause } from './retries.ts';
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
  backoff?: { initialMs: number; maxMs: number };
  /** Structured events (attempt failures, usage); never given the key or the prompt. */
  log?: (message: string, details: Record<string, unknown>) => void;
}

export const CLAUDE_V1_BACKOFF = { initialMs: 500, maxMs: 8_000 } as const;

const API_MESSAGE_BYTES = 300;

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

/**
 * Creates the claude-v1 engine; its Anthropic client is built on first use and kept while the key is.
 * One repair round-trip follows a reply that fails the draft schema. When the budget is spent, or a
 * request is refused, the run fails with a message naming the cause.
 */
export function createClaudeV1(options: ClaudeV1Options): SynthesisEngine {
  const backoff = options.backoff ?? CLAUDE_V1_BACKOFF;
  const log = options.log ?? (() => undefined);
  const budgetSeconds = Math.round(options.timeBudgetMs / 100) / 10;
  let client: { key: string; anthropic: Anthropic } | undefined;

  const clientFor = (key: string): Anthropic => {
    if (client?.key !== key) {
      client = {
        key,
        // Retries are ours (below), so that they share the run's budget and are counted.
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

  const generate = async (context: SynthesisContext): Promise<SynthesisProposal> => {
    const keys = options.keys;
    if (keys === undefined) {
      throw new SynthesisFailure(
        'claude-v1 is not configured: no Anthropic API key (set ANTHROPIC_API_KEY locally, or ' +
          'ANTHROPIC_SECRET_ARN on AWS). Start the run with synthesisHandler "heuristic-v1" instead.',
      );
    }
    const prompt = buildSynthesisPrompt(context);
    const usage: SynthesisUsage = { model: options.model, inputTokens: 0, outputTokens: 0, attempts: 0 };
    const deadline = new Deadline(options.timeBudgetMs);
    const fail = (message: string): SynthesisFailure =>
      new SynthesisFailure(message, { usage: { ...usage } });

    /** A fault that may pass (rate limit, overload, 5xx, timeout): the queue retries the job later. */
    const retryLater = (message: string, retryAfterSeconds?: number): TransientSynthesisError =>
      new TransientSynthesisError(message, {
        usage: { ...usage },
        ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
      });
    const budgetSpent = (last: Attempted | undefined): TransientSynthesisError =>
      retryLater(
        `The model API ${last === undefined ? 'did not answer in time' : CAUSE_TEXT[last.cause](last.status)}, ` +
          `and the ${budgetSeconds} s time budget of the attempt was spent after ${usage.attempts} ` +
          `request${usage.attempts === 1 ? '' : 's'}.`,
      );

    /** Reads the key within the budget: a read cut short by the deadline fails the run like a slow API. */
    const readKey = async (read: (signal: AbortSignal) => Promise<string>): Promise<string> => {
      try {
        return await read(deadline.signal);
      } catch (error) {
        if (deadline.signal.aborted) throw budgetSpent(undefined);
        throw error;
      }
    };
    // Stryker disable next-line StringLiteral: the key is read (readKey) before any request uses it
    let key = '';
    let refreshedKey = false;

    /** One logical request: retried on transient failures while the budget and retries last. */
    const request = async (
      params: Anthropic.Messages.MessageCreateParamsNonStreaming,
    ): Promise<Anthropic.Messages.Message> => {
      let last: Attempted | undefined;
      for (let retry = 0; ; ) {
        const remaining = deadline.remainingMs();
        if (remaining <= 0) throw budgetSpent(last);
        usage.attempts += 1;
        let failure: unknown;
        try {
          const message = await clientFor(key).messages.create(params, {
            signal: deadline.signal,
            timeout: Math.min(options.requestTimeoutMs, remaining),
            maxRetries: 0,
          });
          usage.inputTokens +=
            message.usage.input_tokens +
            (message.usage.cache_creation_input_tokens ?? 0) +
            (message.usage.cache_read_input_tokens ?? 0);
          usage.outputTokens += message.usage.output_tokens;
          return message;
        } catch (error) {
          failure = error;
        }

        if (deadline.signal.aborted) throw budgetSpent(last ?? { cause: 'timeout', status: undefined });
        if (failure instanceof Anthropic.AuthenticationError) {
          // The secret may have been rotated since it was cached: read it again, once per run.
          const stale = key;
          if (!refreshedKey) {
            refreshedKey = true;
            key = await readKey((signal) => keys.refresh(signal));
          }
          if (key !== stale) continue;
          throw fail(
            `The model API rejected the API key (HTTP 401); store a valid key in ${keys.description} ` +
              'and start a new run.',
          );
        }
        const attempted = retryableCause(failure);
        if (attempted === undefined) {
          if (failure instanceof Anthropic.APIError && failure.status !== undefined) {
            const detail =
              failure.apiMessage === null ? '' : `: ${shorten(failure.apiMessage, API_MESSAGE_BYTES)}`;
            throw fail(`The model API refused the request (HTTP ${failure.status}${detail}).`);
          }
          throw failure;
        }
        last = attempted;
        log('model request failed', {
          cause: attempted.cause,
          status: attempted.status,
          attempt: usage.attempts,
          remainingMs: deadline.remainingMs(),
        });
        if (retry >= options.maxRetries) {
          throw retryLater(
            `The model API ${CAUSE_TEXT[attempted.cause](attempted.status)} on ${retry + 1} ` +
              `attempt${retry === 0 ? '' : 's'} of the request.`,
          );
        }
        const asked = requestedWaitMs(failure);
        const wait =
          asked ?? Math.min(backoff.maxMs, backoff.initialMs * 2 ** retry) * (1 - Math.random() * 0.25);
        if (wait >= deadline.remainingMs()) {
          if (asked !== undefined) {
            throw retryLater(
              `The model API ${CAUSE_TEXT[attempted.cause](attempted.status)} and asked to retry after ` +
                `${Math.ceil(asked / 1000)} s, beyond the ${budgetSeconds} s time budget of the attempt.`,
              Math.ceil(asked / 1000),
            );
          }
          throw budgetSpent(last);
        }
        try {
          // Stryker disable next-line ObjectLiteral: the wait is shorter than the budget left (checked above), so the deadline cannot fire during it
          await sleep(wait, undefined, { signal: deadline.signal });
        } catch /* Stryker disable next-line BlockStatement: reached only if the deadline fired during the wait; without it, the next turn of the loop throws the same budgetSpent(last) */ {
          throw budgetSpent(last);
        }
        retry += 1;
      }
    };

    try {
      key = await readKey((signal) => keys.get(signal));
      const base: Anthropic.Messages.MessageCreateParamsNonStreaming = {
        model: options.model,
        max_tokens: options.maxTokens,
        system: prompt.system,
        tools: [SUBMIT_SYNTHESIS_TOOL],
        tool_choice: { type: 'tool', name: SUBMIT_SYNTHESIS_TOOL_NAME },
        messages: [{ role: 'user', content: prompt.user }],
      };
      const first = await request(base);
      let checked = checkReply(first, options.maxTokens);
      if (!checked.ok) {
        log('model reply failed validation; asking for a repair', { errors: checked.errors.length });
        const previous = assistantTurn(first);
        const repaired = await request({
          ...base,
          messages: [
            ...base.messages,
            ...(previous === undefined ? [] : [previous]),
            repairTurn(first, checked.errors),
          ],
        });
        checked = checkReply(repaired, options.maxTokens);
        if (!checked.ok) {
          throw fail(
            `The model's reply did not match the ${SUBMIT_SYNTHESIS_TOOL_NAME} schema, even after one repair ` +
              `attempt: ${shorten(checked.errors.slice(0, 3).join('; '), 600)}`,
          );
        }
      }

      const { draft, warnings } = withoutPlaceholderPatches(checked.draft);
      const proposal = finalizeProposal(draft, {
        shownSignals: prompt.shownSignals,
        shownExecutions: prompt.shownExecutions,
        executionsInWindow: context.executions,
        baseConfiguration: context.baseConfiguration,
        allSignalsInWindow: context.signals,
      });
      log('model synthesis generated', { cost: costOf(usage), estimatedPromptSize: prompt.estimatedTokens });
      return {
        ...proposal,
        structuredWarnings: [...warnings, ...proposal.structuredWarnings],
        usage: { ...usage },
      };
    } catch (error) {
      if (error instanceof SynthesisFailure || error instanceof TransientSynthesisError) {
        log(
          error instanceof SynthesisFailure ? 'model synthesis failed' : 'model synthesis will be retried',
          {
            cost: costOf(usage),
            reason: error.message,
          },
        );
      }
      throw error;
    } finally /* Stryker disable next-line BlockStatement: once the run has settled nothing listens to the deadline's signal; disposing only frees its timer early */ {
      // Stryker disable next-line CallExpression: once the run has settled nothing listens to the deadline's signal; disposing only frees its timer early
      deadline.dispose();
    }
  };

  return { name: 'claude-v1', generate };
}
