/*
 * The session signing key: Secrets Manager on AWS, re-read every 15 minutes for rotation,
 * or SESSION_SECRET in the local stack and the tests.
 */
import { getSecretsManagerClient, makeSecretCache, type SecretCache } from './secrets.ts';

/**
 * The session signing key (HMAC-SHA256 of access tokens). On AWS it lives in Secrets Manager:
 * the stack gives the functions that sign or verify sessions only SESSION_SECRET_ARN and read
 * access to that secret, and the value is read once per container, then re-read every 15 minutes
 * so a rotated key is picked up. SESSION_SECRET (the key itself) is for the local stack and the
 * tests only, and is refused inside a real Lambda runtime.
 */
const MIN_KEY_LENGTH = 32;
const REREAD_AFTER_MS = 15 * 60_000;

export type SigningKeyProvider = () => Promise<Buffer>;

function toKey(value: string, source: string): Buffer {
  if (value.length < MIN_KEY_LENGTH)
    throw new Error(`The session signing key from ${source} is shorter than ${MIN_KEY_LENGTH} characters.`);
  return Buffer.from(value, 'utf8');
}

/** Reads the key lazily, on the first request that needs it, so importing a handler never fails on it. */
export function sessionSigningKeyFromEnv(env: NodeJS.ProcessEnv = process.env): SigningKeyProvider {
  let secrets: SecretCache | undefined;
  let readAt = 0;
  return async () => {
    const arn = env.SESSION_SECRET_ARN;
    if (arn) {
      secrets ??= makeSecretCache(getSecretsManagerClient(), arn);
      let value: string;
      if (readAt > 0 && Date.now() - readAt > REREAD_AFTER_MS) {
        // A failed re-read keeps the key in hand: Secrets Manager being slow must not end sessions.
        value = await secrets.refresh().catch(() => (secrets as SecretCache).get());
      } else {
        value = await secrets.get();
      }
      if (readAt === 0 || Date.now() - readAt > REREAD_AFTER_MS) readAt = Date.now();
      return toKey(value, 'Secrets Manager');
    }
    if (env.SESSION_SECRET) {
      if (env.AWS_EXECUTION_ENV?.startsWith('AWS_Lambda')) {
        throw new Error(
          'SESSION_SECRET is for local use only; on AWS the key comes from SESSION_SECRET_ARN.',
        );
      }
      return toKey(env.SESSION_SECRET, 'SESSION_SECRET');
    }
    throw new Error(
      'No session signing key: set SESSION_SECRET_ARN (AWS) or SESSION_SECRET (local stack, tests).',
    );
  };
}
