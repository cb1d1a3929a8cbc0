import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import {
  generateWebhookSecret,
  openSecret,
  sealSecret,
  signWebhook,
} from '../../../lambdas/webhooks/secret.ts';

describe('webhook secrets', () => {
  it('are whsec_ and base64 of 24 to 64 random bytes, never twice the same', () => {
    const secret = generateWebhookSecret();
    const bytes = Buffer.from(secret.slice('whsec_'.length), 'base64');
    expect(secret.startsWith('whsec_')).toBe(true);
    expect(bytes.length).toBeGreaterThanOrEqual(24);
    expect(bytes.length).toBeLessThanOrEqual(64);
    expect(generateWebhookSecret()).not.toBe(secret);
  });

  it('sign what the standardwebhooks package verifies, and nothing else', () => {
    const secret = generateWebhookSecret();
    const body = JSON.stringify({
      type: 'synthesis_run.failed',
      timestamp: new Date().toISOString(),
      data: {},
    });
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = {
      'webhook-id': 'evt_1',
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signWebhook(secret, 'evt_1', timestamp, body),
    };
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(secret).verify(`${body} `, headers)).toThrow();
    expect(() => new Webhook(generateWebhookSecret()).verify(body, headers)).toThrow();
  });

  it('are sealed with AES-256-GCM: the envelope hides the secret and opens only with its key', () => {
    const key = randomBytes(32);
    const secret = generateWebhookSecret();
    const sealed = sealSecret(secret, key);
    expect(sealed).not.toContain(secret.slice(6));
    expect(openSecret(sealed, key)).toBe(secret);
    expect(() => openSecret(sealed, randomBytes(32))).toThrow();
    const [version, iv, tag, ciphertext] = sealed.split('.');
    // Another first character than the one there (an `A` already in place changed nothing, 1 run in 64).
    const first = ciphertext?.startsWith('A') ? 'B' : 'A';
    const tampered = [version, iv, tag, `${first}${ciphertext?.slice(1)}`].join('.');
    expect(() => openSecret(tampered, key)).toThrow();
  });
});
