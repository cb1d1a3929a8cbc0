/**
 * The prompt cache of the model fakes (Anthropic Messages and Bedrock InvokeModel): usage figures
 * for a request as the providers report them, from its size. Blocks come in the providers' order
 * (tools, system, messages); the longest prefix ending at a `cache_control` breakpoint that was
 * stored within the cache's lifetime is read, the rest up to the last breakpoint is written, and
 * what follows is plain input.
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
      const breakpoints = blocks.flatMap((block, index) => (hasBreakpoint(block) ? [index] : []));
      const plain = { input_tokens: total, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
      const last = breakpoints.at(-1);
      if (last === undefined || tokensOf(blocks.slice(0, last + 1)) < MIN_CACHED_TOKENS)
        return { ...plain, output_tokens: outputTokens };
      const keyOf = (end: number) =>
        createHash('sha256')
          .update(JSON.stringify(blocks.slice(0, end + 1)))
          .digest('hex');
      // As the providers do: the longest prefix cached at a breakpoint is read, the rest up to the
      // last breakpoint is written; every breakpoint's prefix is (re)stored for the lifetime.
      const hit = [...breakpoints].reverse().find((end) => (expiresAt.get(keyOf(end)) ?? 0) > now());
      const read = hit === undefined ? 0 : tokensOf(blocks.slice(0, hit + 1));
      const cached = tokensOf(blocks.slice(0, last + 1));
      for (const end of breakpoints) expiresAt.set(keyOf(end), now() + CACHE_LIFETIME_MS);
      return {
        input_tokens: Math.max(0, total - cached),
        cache_creation_input_tokens: cached - read,
        cache_read_input_tokens: read,
        output_tokens: outputTokens,
      };
    },
    clear: () => expiresAt.clear(),
  };
}
