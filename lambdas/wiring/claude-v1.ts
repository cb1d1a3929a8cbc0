/**
 * The synthesis worker's on-demand part: claude-v1 composed with its settings and API key source
 * (the Anthropic SDK, Secrets Manager). Bundled as claude-v1.mjs next to the worker's index.mjs and
 * imported the first time a claude-v1 job arrives, so heuristic-v1 jobs and cold starts skip it.
 */
import type { SynthesisEngine } from '../core/ports/synthesis.ts';
import { createClaudeV1 } from '../synthesis/claude/engine.ts';
import { anthropicSettingsFromEnv } from './anthropic.ts';

type Log = (message: string, details: Record<string, unknown>) => void;

/** claude-v1 configured from the environment (read now, at the part's load); `log` gets its events. */
export function createClaudeV1FromEnv(log: Log): SynthesisEngine {
  return createClaudeV1({ ...anthropicSettingsFromEnv(), log });
}
