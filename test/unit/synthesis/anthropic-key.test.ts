import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SynthesisFailure } from '../../../lambdas/core/errors.ts';
import { defaultSynthesisHandler } from '../../../lambdas/core/synthesis-handlers.ts';
import { WORKER_TIMEOUT_SECONDS } from '../../../lambdas/functions.ts';
import {
  ANTHROPIC_DEFAULTS,
  anthropicSettingsFromEnv,
  MAX_TIME_BUDGET_MS,
  secretApiKeySource,
} from '../../../lambdas/wiring/anthropic.ts';
import { makeSecretCache } from '../../../lambdas/wiring/secrets.ts';

/*
 * The API key's way from Secrets Manager to claude-v1 (lambdas/wiring/secrets.ts and
 * anthropic.ts), and the settings read from the environment. Kept with the synthesis tests
 * because claude-v1 is their only user.
 */

const ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:anthropic-AbCdEf';
const secrets = mockClient(SecretsManagerClient);

beforeEach(() => {
  secrets.reset();
});

const calls = () => secrets.commandCalls(GetSecretValueCommand).length;

describe('the secret cache', () => {
  it('reads the secret once and serves later calls from the cache', async () => {
    secrets.on(GetSecretValueCommand, { SecretId: ARN }).resolves({ SecretString: ' key-1\n' });
    const cache = makeSecretCache(new SecretsManagerClient({}), ARN);

    const values = [await cache.get(), await cache.get(), await cache.get()];

    expect(values).toEqual(['key-1', 'key-1', 'key-1']);
    expect(calls()).toBe(1);
  });

  it('shares one read between concurrent callers of a cold cache', async () => {
    secrets.on(GetSecretValueCommand).resolves({ SecretString: 'key-1' });
    const cache = makeSecretCache(new SecretsManagerClient({}), ARN);

    const values = await Promise.all([cache.get(), cache.get(), cache.refresh()]);

    expect(values).toEqual(['key-1', 'key-1', 'key-1']);
    expect(calls()).toBe(1);
  });

  it('reads the secret again on refresh and keeps the new value', async () => {
    secrets
      .on(GetSecretValueCommand)
      .resolvesOnce({ SecretString: 'old-key' })
      .resolves({ SecretString: 'new-key' });
    const cache = makeSecretCache(new SecretsManagerClient({}), ARN);

    const before = await cache.get();
    const refreshed = await cache.refresh();
    const after = await cache.get();

    expect([before, refreshed, after]).toEqual(['old-key', 'new-key', 'new-key']);
    expect(calls()).toBe(2);
  });

  it('does not cache a failed read', async () => {
    secrets
      .on(GetSecretValueCommand)
      .rejectsOnce(Object.assign(new Error('slow down'), { name: 'ThrottlingException' }))
      .resolves({ SecretString: 'key-1' });
    const cache = makeSecretCache(new SecretsManagerClient({}), ARN);

    await expect(cache.get()).rejects.toThrow('slow down');
    expect(await cache.get()).toBe('key-1');
    expect(calls()).toBe(2);
  });

  it('keeps the old value when a refresh fails', async () => {
    secrets
      .on(GetSecretValueCommand)
      .resolvesOnce({ SecretString: 'key-1' })
      .rejects(Object.assign(new Error('down'), { name: 'InternalServiceError' }));
    const cache = makeSecretCache(new SecretsManagerClient({}), ARN);

    await cache.get();
    await expect(cache.refresh()).rejects.toThrow('down');
    expect(await cache.get()).toBe('key-1');
  });
});

describe('secretApiKeySource', () => {
  const source = () => secretApiKeySource(makeSecretCache(new SecretsManagerClient({}), ARN));

  it('fails the run while the secret holds the placeholder the stack stored', async () => {
    secrets
      .on(GetSecretValueCommand)
      .resolves({ SecretString: 'REPLACE_ME: store the Anthropic API key in this secret' });

    await expect(source().get()).rejects.toThrow(SynthesisFailure);
    await expect(source().get()).rejects.toThrow('still holds its placeholder');
  });

  it('fails the run when the secret cannot be read for good, and lets transient errors through for a retry', async () => {
    secrets
      .on(GetSecretValueCommand)
      .rejects(Object.assign(new Error('no'), { name: 'AccessDeniedException' }));
    await expect(source().get()).rejects.toThrow(
      new SynthesisFailure(
        "The Anthropic API key could not be read from Secrets Manager: the secret is missing, deleted or not readable by the worker. Check the secret and the worker's role, then start a new run.",
      ),
    );

    secrets.reset();
    secrets
      .on(GetSecretValueCommand)
      .rejects(Object.assign(new Error('throttled'), { name: 'ThrottlingException' }));
    const transient = await source()
      .get()
      .catch((error: unknown) => error);
    expect(transient).not.toBeInstanceOf(SynthesisFailure);
    expect(transient).toMatchObject({ name: 'ThrottlingException' });
  });
});

describe('anthropicSettingsFromEnv', () => {
  const NAMES = [
    'ANTHROPIC_SECRET_ARN',
    'ANTHROPIC_API_KEY',
    'ANTHROPIC_BASE_URL',
    'ANTHROPIC_MODEL',
    'ANTHROPIC_MAX_TOKENS',
    'ANTHROPIC_TIME_BUDGET_MS',
    'ANTHROPIC_REQUEST_TIMEOUT_MS',
    'ANTHROPIC_MAX_RETRIES',
  ];
  let saved: Record<string, string | undefined>;
  beforeEach(() => {
    saved = Object.fromEntries(NAMES.map((name) => [name, process.env[name]]));
    for (const name of NAMES) delete process.env[name];
  });
  afterEach(() => {
    for (const name of NAMES) {
      if (saved[name] === undefined) delete process.env[name];
      else process.env[name] = saved[name];
    }
  });

  it('has defaults that fit in the worker timeout, and no key unless one is configured', () => {
    const settings = anthropicSettingsFromEnv();

    expect(settings).toMatchObject({
      keys: undefined,
      baseURL: undefined,
      model: ANTHROPIC_DEFAULTS.model,
      maxTokens: 4_096,
      timeBudgetMs: 90_000,
      requestTimeoutMs: 60_000,
      maxRetries: 4,
    });
    expect(settings.timeBudgetMs).toBeLessThanOrEqual(MAX_TIME_BUDGET_MS);
    expect(MAX_TIME_BUDGET_MS).toBeLessThan(WORKER_TIMEOUT_SECONDS * 1000);
  });

  it('reads the key locally from ANTHROPIC_API_KEY and every setting from its variable', async () => {
    Object.assign(process.env, {
      ANTHROPIC_API_KEY: 'local-key',
      ANTHROPIC_BASE_URL: 'http://127.0.0.1:4010',
      ANTHROPIC_MODEL: 'claude-other',
      ANTHROPIC_MAX_TOKENS: '2000',
      ANTHROPIC_TIME_BUDGET_MS: '30000',
      ANTHROPIC_REQUEST_TIMEOUT_MS: '45000',
      ANTHROPIC_MAX_RETRIES: '0',
    });

    const settings = anthropicSettingsFromEnv();

    expect(await settings.keys?.get()).toBe('local-key');
    expect(settings).toMatchObject({
      baseURL: 'http://127.0.0.1:4010',
      model: 'claude-other',
      maxTokens: 2_000,
      timeBudgetMs: 30_000,
      // A request may not outlast the budget it belongs to.
      requestTimeoutMs: 30_000,
      maxRetries: 0,
    });
  });

  it('prefers the secret on AWS and reads it only when a job needs it', async () => {
    Object.assign(process.env, { ANTHROPIC_SECRET_ARN: ARN, ANTHROPIC_API_KEY: 'ignored' });
    secrets.on(GetSecretValueCommand).resolves({ SecretString: 'secret-key' });

    const settings = anthropicSettingsFromEnv();

    expect(calls()).toBe(0);
    expect(await settings.keys?.get()).toBe('secret-key');
    expect(settings.keys?.description).toContain('ANTHROPIC_SECRET_ARN');
  });

  it('refuses a budget longer than the worker can wait for', () => {
    process.env.ANTHROPIC_TIME_BUDGET_MS = String(WORKER_TIMEOUT_SECONDS * 1000);

    expect(() => anthropicSettingsFromEnv()).toThrow('ANTHROPIC_TIME_BUDGET_MS');
  });
});

describe('defaultSynthesisHandler', () => {
  it('is claude-v1 when a key is configured either way, heuristic-v1 otherwise', () => {
    expect(defaultSynthesisHandler({ ANTHROPIC_API_KEY: 'k' })).toBe('claude-v1');
    expect(defaultSynthesisHandler({ ANTHROPIC_SECRET_ARN: ARN })).toBe('claude-v1');
    expect(defaultSynthesisHandler({})).toBe('heuristic-v1');
    expect(defaultSynthesisHandler({ ANTHROPIC_API_KEY: '  ' })).toBe('heuristic-v1');
  });
});
