/**
 * claude-v1, the client adapter: asks Claude (the Anthropic API or Amazon Bedrock) for the synthesis
 * through one forced tool call, with the stable prefix of the prompt marked for the provider's
 * prompt cache, retries transient failures within the run's time budget, and hands the checked
 * draft to finalizeProposal.
 */
import { SynthesisFailure, TransientSynthesisError } from '../../core/errors.ts';
import type {
  SynthesisContext,
  SynthesisEngine,
  SynthesisProposal,
  SynthesisUsage,
} from '../../core/ports/synthesis.ts';
import { finalizeProposal } from '../finalize.ts';
import { shorten } from '../text-budget.ts';
import { type AnthropicAccess, connectionFor, type ModelAccess } from './connection.ts';
import { buildSynthesisPrompt, type SynthesisPrompt } from './prompt.ts';
import {
  budgetSpent,
  type Log,
  type Params,
  type Run,
  request,
  runFailure,
  type Spending,
} from './request.ts';
import { type Backoff, Deadline } from './retries.ts';
import {
  assistantTurn,
  checkReply,
  repairTurn,
  SUBMIT_SYNTHESIS_TOOL,
  SUBMIT_SYNTHESIS_TOOL_NAME,
  withoutPlaceholderPatches,
} from './tool.ts';

export type {
  AnthropicAccess,
  ApiKeySource,
  BedrockAccess,
  MessagesClient,
  ModelAccess,
} from './connection.ts';
export { CLAUDE_V1_BACKOFF } from './request.ts';

/** The limits of claude-v1's requests, whichever provider serves them. */
export interface ClaudeV1Settings {
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

/** How claude-v1 reaches the model (ModelAccess: the Anthropic API with a key, or Bedrock) and its limits. */
export type ClaudeV1Options = ClaudeV1Settings & ModelAccess;
/** claude-v1 on the Anthropic API. */
export type AnthropicClaudeV1Options = ClaudeV1Settings & AnthropicAccess;

/**
 * Usage under log-safe names: the logger redacts every key that contains "token", which would
 * hide inputTokens and outputTokens.
 */
const costOf = (usage: SynthesisUsage) => ({
  model: usage.model,
  input: usage.inputTokens,
  ...(usage.cacheReadInputTokens ? { cacheRead: usage.cacheReadInputTokens } : {}),
  ...(usage.cacheWriteInputTokens ? { cacheWrite: usage.cacheWriteInputTokens } : {}),
  output: usage.outputTokens,
  attempts: usage.attempts,
});

/** Marks the end of the stable prefix (the tool, then the instructions) for the prompt cache. */
const CACHED = { cache_control: { type: 'ephemeral' } } as const;

/**
 * Creates the claude-v1 engine; its client is built on first use (kept while the key is). One repair
 * round-trip follows a reply that fails the draft schema. When the budget is spent, or a request
 * is refused, the run fails with a message naming the cause.
 */
export function createClaudeV1(options: ClaudeV1Options): SynthesisEngine {
  const connection = connectionFor(options, options);
  const log = options.log ?? (() => undefined);

  const generate = async (context: SynthesisContext): Promise<SynthesisProposal> => {
    const prompt = buildSynthesisPrompt(context);
    const usage: Run['usage'] = {
      model: options.model,
      inputTokens: 0,
      cacheReadInputTokens: 0,
      cacheWriteInputTokens: 0,
      outputTokens: 0,
      attempts: 0,
    };
    const spending: Spending = { settings: options, usage };
    return Deadline.within(options.timeBudgetMs, async (deadline) => {
      try {
        // A read of the credentials cut short by the deadline fails the run like a slow API.
        const client = await connection.open(async (read) => {
          try {
            return await read(deadline.signal);
          } catch (error) {
            if (deadline.signal.aborted) throw budgetSpent(spending, undefined);
            throw error;
          }
        });
        return await synthesize(
          { settings: options, log, deadline, usage, client },
          options,
          context,
          prompt,
        );
      } catch (error) {
        logSettled(log, usage, error);
        throw error;
      }
    });
  };

  return { name: 'claude-v1', generate };
}

/** Drafts with the model, checks the draft and turns it into the proposal, with what the run cost. */
async function synthesize(
  run: Run,
  options: ClaudeV1Options,
  context: SynthesisContext,
  prompt: SynthesisPrompt,
): Promise<SynthesisProposal> {
  const { draft, warnings } = withoutPlaceholderPatches(await draftFromModel(run, options, prompt));
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
function logSettled(log: Log, usage: SynthesisUsage, error: unknown): void {
  if (error instanceof SynthesisFailure || error instanceof TransientSynthesisError) {
    log(error instanceof SynthesisFailure ? 'model synthesis failed' : 'model synthesis will be retried', {
      cost: costOf(usage),
      reason: error.message,
    });
  }
}

/**
 * The first request of a run, with two prompt-cache breakpoints: the tool and the instructions (the
 * same for every run of every pipeline) end with one, so any run within the cache's lifetime reads
 * them at a tenth of the input price; the pipeline's data ends with the other, so the repair request
 * and a second run of the same evidence read the whole prompt (docs/decisions.md).
 */
export function firstRequest(
  options: Pick<ClaudeV1Options, 'model' | 'maxTokens'>,
  prompt: SynthesisPrompt,
): Params {
  return {
    model: options.model,
    max_tokens: options.maxTokens,
    system: [{ type: 'text', text: prompt.system, ...CACHED }],
    tools: [SUBMIT_SYNTHESIS_TOOL],
    tool_choice: { type: 'tool', name: SUBMIT_SYNTHESIS_TOOL_NAME },
    messages: [{ role: 'user', content: [{ type: 'text', text: prompt.user, ...CACHED }] }],
  };
}

/** The model's draft: asked for once, and once more with the schema errors when the reply fails them. */
async function draftFromModel(run: Run, options: ClaudeV1Options, prompt: SynthesisPrompt) {
  const base = firstRequest(options, prompt);
  const first = await request(run, base);
  const checked = checkReply(first, options.maxTokens);
  if (checked.ok) return checked.draft;
  run.log('model reply failed validation; asking for a repair', { errors: checked.errors.length });
  const previous = assistantTurn(first);
  const repaired = await request(run, {
    ...base,
    messages: [
      ...base.messages,
      ...(previous === undefined ? [] : [previous]),
      repairTurn(first, checked.errors),
    ],
  });
  const rechecked = checkReply(repaired, options.maxTokens);
  if (rechecked.ok) return rechecked.draft;
  throw runFailure(
    run,
    `The model's reply did not match the ${SUBMIT_SYNTHESIS_TOOL_NAME} schema, even after one repair ` +
      `attempt: ${shorten(rechecked.errors.slice(0, 3).join('; '), 600)}`,
  );
}
