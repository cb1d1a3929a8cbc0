/*
 * Secrets Manager reads cached per Lambda container: the shared client and a cache of one
 * secret that can be re-read when its value was rejected.
 */
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';

/**
 * A secret read once per Lambda container and kept for its warm invocations, so a job costs no
 * Secrets Manager call; `refresh` re-reads it, for when the value in hand was rejected (rotated).
 */
export interface SecretCache {
  get(signal?: AbortSignal): Promise<string>;
  /** Drops the cached value and reads the secret again; concurrent callers share one read. */
  refresh(signal?: AbortSignal): Promise<string>;
}

let secretsClient: SecretsManagerClient | undefined;

/** The container's Secrets Manager client, created on first use. */
export function getSecretsManagerClient(): SecretsManagerClient {
  secretsClient ??= new SecretsManagerClient({});
  return secretsClient;
}

/** Caches the string value of one secret; a failed read is not cached, so the next call tries again. */
export function makeSecretCache(client: SecretsManagerClient, secretId: string): SecretCache {
  let cached: Promise<string> | undefined;
  let reading: Promise<string> | undefined;

  const read = (signal?: AbortSignal): Promise<string> => {
    reading ??= (async () => {
      try {
        const { SecretString } = await client.send(
          new GetSecretValueCommand({ SecretId: secretId }),
          signal ? { abortSignal: signal } : {},
        );
        if (SecretString === undefined || SecretString.trim() === '') {
          throw new Error(`Secret ${secretId} has no string value.`);
        }
        const value = SecretString.trim();
        cached = Promise.resolve(value);
        return value;
      } finally {
        reading = undefined;
      }
    })();
    return reading;
  };

  return {
    get: (signal) => cached ?? read(signal),
    refresh: (signal) => read(signal),
  };
}
