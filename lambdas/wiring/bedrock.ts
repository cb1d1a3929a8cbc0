/*
 * Which provider serves claude-v1 (MODEL_PROVIDER) and, for Amazon Bedrock, its settings from the
 * environment: the model or inference profile id, the region, and a base URL for a local fake. The
 * Bedrock SDK itself is the worker's on-demand part claude-bedrock.mjs (wiring/bedrock-client.ts).
 */
import * as z from 'zod/mini';
import { readConfig } from './config.ts';

/**
 * | variable | default | meaning |
 * |---|---|---|
 * | MODEL_PROVIDER | anthropic | `anthropic` (the API key, wiring/anthropic.ts) or `bedrock` |
 * | BEDROCK_MODEL_ID | us.anthropic.claude-sonnet-4-6-v1:0 | an inference profile id or a model id |
 * | AWS_REGION | (Lambda's) | the region Bedrock is called in: the stack's |
 * | BEDROCK_BASE_URL | https://bedrock-runtime.<region>.amazonaws.com | any compatible endpoint, e.g. a local fake |
 */
export const MODEL_PROVIDERS = ['anthropic', 'bedrock'] as const;
export type ModelProvider = (typeof MODEL_PROVIDERS)[number];
export const DEFAULT_BEDROCK_MODEL_ID = 'us.anthropic.claude-sonnet-4-6-v1:0';

const emptyAsUndefined = z.transform((value: string | undefined) =>
  value === undefined || value.trim() === '' ? undefined : value.trim(),
);

const providerSchema = {
  MODEL_PROVIDER: z.pipe(
    z.pipe(z.optional(z.string()), emptyAsUndefined),
    z._default(z.optional(z.enum(MODEL_PROVIDERS)), 'anthropic'),
  ),
};

const bedrockEnvSchema = {
  BEDROCK_MODEL_ID: z.pipe(
    z.pipe(z.optional(z.string()), emptyAsUndefined),
    z._default(z.optional(z.string()), DEFAULT_BEDROCK_MODEL_ID),
  ),
  AWS_REGION: z.string().check(z.trim(), z.minLength(1)),
  BEDROCK_BASE_URL: z.pipe(z.pipe(z.optional(z.string()), emptyAsUndefined), z.optional(z.url())),
};

/** The provider of claude-v1 from MODEL_PROVIDER; anything but `anthropic` or `bedrock` fails the cold start. */
export function modelProviderFromEnv(): ModelProvider {
  return readConfig(providerSchema).MODEL_PROVIDER ?? 'anthropic';
}

/** BEDROCK_MODEL_ID, or its default; for the start function's estimate, which needs no region. */
export function bedrockModelIdFromEnv(): string {
  return (
    readConfig({ BEDROCK_MODEL_ID: bedrockEnvSchema.BEDROCK_MODEL_ID }).BEDROCK_MODEL_ID ??
    DEFAULT_BEDROCK_MODEL_ID
  );
}

export interface BedrockSettings {
  model: string;
  region: string;
  baseURL: string | undefined;
}

export function bedrockSettingsFromEnv(): BedrockSettings {
  const env = readConfig(bedrockEnvSchema);
  return {
    model: env.BEDROCK_MODEL_ID ?? DEFAULT_BEDROCK_MODEL_ID,
    region: env.AWS_REGION,
    baseURL: env.BEDROCK_BASE_URL,
  };
}
