/*
 * The Anthropic client settings of the worker, read from the environment, and the adapter
 * that gives claude-v1 its API key (Secrets Manager on AWS, the environment locally).
 */
import * as z from 'zod/mini';
import { SynthesisFailure } from '../core/errors.ts';
import { WORKER_TIMEOUT_SECONDS } from '../functions.ts';
import type { ApiKeySource } from '../synthesis/claude/engine.ts';
import { readConfig } from './config.ts';
import { getSecretsManagerClient, makeSecretCache, type SecretCache } from './secrets.ts';

/**
 * Settings of the Anthropic Messages API client used by claude-v1, from the environment:
 *
 * | variable | default | meaning |
 * |---|---|---|
 * | ANTHROPIC_SECRET_ARN | – | on AWS: the Secrets Manager secret holding the API key (wins if both are set) |
 * | ANTHROPIC_API_KEY | – | locally: the API key itself |
 * | ANTHROPIC_BASE_URL | the SDK's (https://api.anthropic.com) | any compatible endpoint, e.g. a local fake |
 * | ANTHROPIC_MODEL | claude-sonnet-4-6 | model id |
 * | ANTHROPIC_MAX_TOKENS | 4096 | max_tokens of each request |
 * | ANTHROPIC_TIME_BUDGET_MS | 90000 | all model requests, retries and waits of one run |
 * | ANTHROPIC_REQUEST_TIMEOUT_MS | 60000 | one request |
 * | ANTHROPIC_MAX_RETRIES | 4 | retries of one request after 429, 529, 5xx, timeouts |
 */
export const ANTHROPIC_DEFAULTS = {
  // SDK 1.12 flags claude-sonnet-4-5 as deprecated (end of life 2026-11-30) and warns on each call.
  model: 'claude-sonnet-4-6',
  maxTokens: 4_096,
  timeBudgetMs: 90_000,
  requestTimeoutMs: 60_000,
  maxRetries: 4,
} as const;

/**
 * The budget must end well before the worker's timeout: the run still has to be read, claimed and
 * written, and a Lambda killed mid-call would leave the run `generating` until its lease expires.
 */
export const MAX_TIME_BUDGET_MS = (WORKER_TIMEOUT_SECONDS - 20) * 1000;

// zod/mini, as every other module of the worker: claude-v1.mjs shares zod's core modules with the
// part every job loads, so the classic API here would grow that part by about 27 KB.
const boundedInt = (min: number, max: number) =>
  z.pipe(z.coerce.number(), z.int().check(z.gte(min), z.lte(max)));
const optionalText = z.pipe(
  z.optional(z.string()),
  z.transform((value) => (value === undefined || value.trim() === '' ? undefined : value.trim())),
);

const anthropicEnvSchema = {
  ANTHROPIC_SECRET_ARN: optionalText,
  ANTHROPIC_API_KEY: optionalText,
  ANTHROPIC_BASE_URL: z.union([
    z.optional(z.url()),
    z.pipe(
      z.literal(''),
      z.transform(() => undefined),
    ),
  ]),
  ANTHROPIC_MODEL: z._default(z.string().check(z.trim(), z.minLength(1)), ANTHROPIC_DEFAULTS.model),
  ANTHROPIC_MAX_TOKENS: z._default(boundedInt(1, 32_000), ANTHROPIC_DEFAULTS.maxTokens),
  ANTHROPIC_TIME_BUDGET_MS: z._default(boundedInt(1, MAX_TIME_BUDGET_MS), ANTHROPIC_DEFAULTS.timeBudgetMs),
  ANTHROPIC_REQUEST_TIMEOUT_MS: z._default(
    boundedInt(1, MAX_TIME_BUDGET_MS),
    ANTHROPIC_DEFAULTS.requestTimeoutMs,
  ),
  ANTHROPIC_MAX_RETRIES: z._default(boundedInt(0, 10), ANTHROPIC_DEFAULTS.maxRetries),
};

/** The value lib/stateful.ts stores until the operator puts the real key in the secret. */
const PLACEHOLDER_PREFIX = 'REPLACE_ME';

/** Secrets Manager errors that a retry of the job cannot fix; anything else is thrown for redelivery. */
const PERMANENT_SECRET_ERRORS = new Set([
  'ResourceNotFoundException',
  'AccessDeniedException',
  'DecryptionFailure',
  'InvalidRequestException',
  'InvalidParameterException',
]);

/** An API key kept in a Secrets Manager secret, read through a container-wide cache. */
export function secretApiKeySource(cache: SecretCache): ApiKeySource {
  const checked = async (read: Promise<string>): Promise<string> => {
    let value: string;
    try {
      value = await read;
    } catch (error) {
      const name = error instanceof Error ? error.name : 'Error';
      if (PERMANENT_SECRET_ERRORS.has(name)) {
        throw new SynthesisFailure(
          "The Anthropic API key could not be read from Secrets Manager: the secret is missing, deleted or not readable by the worker. Check the secret and the worker's role, then start a new run.",
          { cause: error },
        );
      }
      throw error;
    }
    if (value.startsWith(PLACEHOLDER_PREFIX)) {
      throw new SynthesisFailure(
        'The Anthropic API key secret still holds its placeholder; store the key in it ' +
          '(aws secretsmanager put-secret-value) and start a new run.',
      );
    }
    return value;
  };
  return {
    description: 'the Secrets Manager secret named by ANTHROPIC_SECRET_ARN',
    get: (signal) => checked(cache.get(signal)),
    refresh: (signal) => checked(cache.refresh(signal)),
  };
}

/** An API key given directly (the local stack); it cannot change, so a refresh returns it again. */
export function staticApiKeySource(key: string, description = 'ANTHROPIC_API_KEY'): ApiKeySource {
  return { description, get: async () => key, refresh: async () => key };
}

export interface AnthropicSettings {
  keys: ApiKeySource | undefined;
  baseURL: string | undefined;
  model: string;
  maxTokens: number;
  timeBudgetMs: number;
  requestTimeoutMs: number;
  maxRetries: number;
}

/** Reads the Anthropic settings once; the key itself is fetched lazily, on the first job that needs it. */
export function anthropicSettingsFromEnv(): AnthropicSettings {
  const env = readConfig(anthropicEnvSchema);
  let keys: ApiKeySource | undefined;
  if (env.ANTHROPIC_SECRET_ARN !== undefined) {
    keys = secretApiKeySource(makeSecretCache(getSecretsManagerClient(), env.ANTHROPIC_SECRET_ARN));
  } else if (env.ANTHROPIC_API_KEY !== undefined) {
    keys = staticApiKeySource(env.ANTHROPIC_API_KEY);
  }
  return {
    keys,
    baseURL: env.ANTHROPIC_BASE_URL,
    model: env.ANTHROPIC_MODEL,
    maxTokens: env.ANTHROPIC_MAX_TOKENS,
    timeBudgetMs: env.ANTHROPIC_TIME_BUDGET_MS,
    requestTimeoutMs: Math.min(env.ANTHROPIC_REQUEST_TIMEOUT_MS, env.ANTHROPIC_TIME_BUDGET_MS),
    maxRetries: env.ANTHROPIC_MAX_RETRIES,
  };
}
