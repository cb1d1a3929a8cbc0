/**
 * The prompt cache of the model fakes (Anthropic Messages and Bedrock InvokeModel): usage figures
 * for a request as the providers report them, from its size. The prefix up to the last
 * `cache_control` breakpoint (tools, system, messages, in that order) is written on its first
 * request and read by the same prefix within the cache's lifetime; what follows is plain input.
 * Tokens are counted as bytes / 4, the fakes' stand-in for a tokenizer.
 */
import { createHash } from 'node:crypto';

/** Anthropic's default cache lifetime: five minutes, refreshed by each read. */
export const CACHE_LIFETIME_MS = 5 * 60_000;
/** The providers cache no prefix shorter than this (Claude Sonnet's minimum). */
export const MIN_CACHED_TOKENS = 1_024;

export interface ReportedUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  output_tokens: number;
}

const tokensOf = (value: unknown): number => Math.ceil(Buffer.byteLength(JSON.stringify(value) ?? '') / 4);

/** The request's blocks in the providers' cache order: tools, then system, then every message's content. */
function blocksOf(body: Record<string, unknown>): unknown[] {
  const tools = Array.isArray(body.tools) ? body.tools : [];
  const system =
    typeof body.system === 'string' ? [{ type: 'text', text: body.system }] : (body.system ?? []);
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const contents = messages.flatMap((message: { content?: unknown }) =>
    typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : (message.content ?? []),
  );
  return [...tools, ...(system as unknown[]), ...(contents as unknown[])];
}

const hasBreakpoint = (block: unknown): boolean =>
  typeof block === 'object' && block !== null && 'cache_control' in block;

export interface PromptCache {
  /** The usage of `body` with `outputTokens` of reply; records the prefix as written. */
  usage(body: unknown, outputTokens: number): ReportedUsage;
  clear(): void;
}

export function makePromptCache(now: () => number = Date.now): PromptCache {
  const expiresAt = new Map<string, number>();
  return {
    usage(body, outputTokens) {
      const blocks =
        typeof body === 'object' && body !== null ? blocksOf(body as Record<string, unknown>) : [];
      const total = tokensOf(blocks);
      let last = -1;
      blocks.forEach((block, index) => {
        if (hasBreakpoint(block)) last = index;
      });
      const prefix = blocks.slice(0, last + 1);
      const prefixTokens = last < 0 ? 0 : tokensOf(prefix);
      const plain = { input_tokens: total, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
      if (prefixTokens < MIN_CACHED_TOKENS) return { ...plain, output_tokens: outputTokens };
      const key = createHash('sha256').update(JSON.stringify(prefix)).digest('hex');
      const hit = (expiresAt.get(key) ?? 0) > now();
      expiresAt.set(key, now() + CACHE_LIFETIME_MS);
      return {
        input_tokens: Math.max(0, total - prefixTokens),
        cache_creation_input_tokens: hit ? 0 : prefixTokens,
        cache_read_input_tokens: hit ? prefixTokens : 0,
        output_tokens: outputTokens,
      };
    },
    clear: () => expiresAt.clear(),
  };
}
