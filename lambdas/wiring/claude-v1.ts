/**
 * The synthesis worker's on-demand part: claude-v1 composed with its settings and its provider (the
 * Anthropic SDK with an API key from Secrets Manager, or Amazon Bedrock with the worker's role).
 * Bundled as claude-v1.mjs next to the worker's index.mjs and imported the first time a claude-v1
 * job arrives, so heuristic-v1 jobs and cold starts skip it; the Bedrock SDK is a part of its own
 * (claude-bedrock.mjs), loaded only when MODEL_PROVIDER is bedrock.
 */
import type { SynthesisEngine } from '../core/ports/synthesis.ts';
import type { BedrockAccess } from '../synthesis/claude/connection.ts';
import { createClaudeV1 } from '../synthesis/claude/engine.ts';
import { anthropicSettingsFromEnv } from './anthropic.ts';
import { type BedrockSettings, bedrockSettingsFromEnv, modelProviderFromEnv } from './bedrock.ts';

type Log = (message: string, details: Record<string, unknown>) => void;

/** claude-v1 configured from the environment (read now, at the part's load); `log` gets its events. */
export function createClaudeV1FromEnv(log: Log): SynthesisEngine {
  const { keys, baseURL, model, ...limits } = anthropicSettingsFromEnv();
  if (modelProviderFromEnv() === 'bedrock') {
    const bedrock = bedrockSettingsFromEnv();
    return createClaudeV1({
      ...limits,
      ...bedrockAccess(bedrock, limits.requestTimeoutMs),
      model: bedrock.model,
      log,
    });
  }
  return createClaudeV1({ ...limits, keys, baseURL, model, log });
}

/**
 * claude-v1's access to Bedrock: the client is imported on the first run (claude-bedrock.mjs, an
 * on-demand part of the worker), so a worker on the Anthropic API never loads the Bedrock SDK.
 */
function bedrockAccess(settings: BedrockSettings, requestTimeoutMs: number): BedrockAccess {
  return {
    provider: 'bedrock',
    region: settings.region,
    client: async () => (await import('./bedrock-client.ts')).createBedrockClient(settings, requestTimeoutMs),
  };
}
