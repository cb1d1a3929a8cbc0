import type { SynthesisEngine } from '../core/ports.ts';
import type { SynthesisHandlerName } from '../core/synthesis-handlers.ts';
import { anthropicSettingsFromEnv } from '../platform/anthropic.ts';
import { logger } from '../platform/logger.ts';
import { createClaudeV1 } from './claude-v1.ts';
import { heuristicV1 } from './heuristic-v1.ts';

/**
 * The worker's handler registry: every name the API accepts maps to an engine. Built once per
 * container, so claude-v1's client and cached API key serve every warm invocation. Only the
 * worker imports this module, which keeps the Anthropic SDK out of the HTTP Lambdas' bundles.
 */
export const SYNTHESIS_ENGINES: Readonly<Record<SynthesisHandlerName, SynthesisEngine>> = {
  'heuristic-v1': heuristicV1,
  'claude-v1': createClaudeV1({
    ...anthropicSettingsFromEnv(),
    log: (message, details) => logger.info(message, details),
  }),
};
