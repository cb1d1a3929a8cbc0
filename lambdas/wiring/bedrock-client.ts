/**
 * The worker's on-demand part claude-bedrock.mjs: the Anthropic Bedrock SDK's client, signing each
 * InvokeModel with the worker role's credentials (SigV4) and sending the API version Bedrock's
 * Claude models accept. Imported by the first claude-v1 run when MODEL_PROVIDER is bedrock.
 */
import { AnthropicBedrock } from '@anthropic-ai/bedrock-sdk';
import { fromEnv } from '@aws-sdk/credential-provider-env';
import type { MessagesClient } from '../synthesis/claude/connection.ts';
import type { BedrockSettings } from './bedrock.ts';

/**
 * The `anthropic_version` of every InvokeModel body. The SDK would copy its own anthropic-version
 * header into the body (2026-10-21 in @anthropic-ai/sdk 1.12), which Bedrock's Claude models refuse
 * with a 400 ValidationException; bedrock-2023-05-31 is the one they all accept (docs/decisions.md).
 */
export const BEDROCK_ANTHROPIC_VERSION = 'bedrock-2023-05-31';

export function createBedrockClient(settings: BedrockSettings, requestTimeoutMs: number): MessagesClient {
  return new AnthropicBedrock({
    awsRegion: settings.region,
    ...(settings.baseURL === undefined ? {} : { baseURL: settings.baseURL }),
    // Never a Bedrock API key from the environment: the role's credentials sign every request.
    apiKey: null,
    // Lambda gives the role's credentials in the environment (as the local stack does); the
    // SDK's default chain would pull in every other provider (SSO, IMDS, STS) for nothing.
    providerChainResolver: async () => fromEnv(),
    // The SDK moves this header into the body as anthropic_version (a later header wins over its own).
    defaultHeaders: { 'anthropic-version': BEDROCK_ANTHROPIC_VERSION },
    // Retries are claude-v1's (request.ts), within the run's budget.
    maxRetries: 0,
    timeout: requestTimeoutMs,
  });
}
