/*
 * Webhook secrets per Standard Webhooks 1.0: `whsec_` + base64 of random bytes, the v1 signature
 * (HMAC-SHA256 over "<id>.<timestamp>.<body>" keyed with the decoded bytes), and the AES-256-GCM
 * envelope the secret is stored in (the key lives in Secrets Manager; wiring/webhook-key.ts).
 */
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';
/** Standard Webhooks asks for 24 to 64 bytes; 32 is HMAC-SHA256's block-size-friendly middle. */
const SECRET_BYTES = 32;

/** A new signing secret, shown to its creator once. */
export function generateWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;
}

/** The `webhook-signature` header's value for one delivery. */
export function signWebhook(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(
    secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret,
    'base64',
  );
  const signature = createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${signature}`;
}

const ENVELOPE_VERSION = 'v1';

/** The secret encrypted under `key` (32 bytes): `v1.<iv>.<tag>.<ciphertext>`, base64url parts. */
export function sealSecret(secret: string, key: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return [ENVELOPE_VERSION, iv, cipher.getAuthTag(), ciphertext]
    .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
    .join('.');
}

/** The secret back from its envelope; throws when the key or the envelope is not the one sealed. */
export function openSecret(sealed: string, key: Buffer): string {
  const [version, iv, tag, ciphertext] = sealed.split('.');
  if (version !== ENVELOPE_VERSION || !iv || !tag || ciphertext === undefined) {
    throw new Error('The stored webhook secret is not an envelope this service wrote.');
  }
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString(
    'utf8',
  );
}
