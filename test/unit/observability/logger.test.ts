import { describe, expect, it } from 'vitest';
import { isSecretLogKey } from '../../../lambdas/observability/logger.ts';

describe('the logger withholds credentials, not the ids a person needs', () => {
  it.each([
    'authorization',
    'Cookie',
    'password',
    'newPassword',
    'DB_PASSWD',
    'pwd',
    'refreshToken',
    'accessToken',
    'clientSecret',
    'apiKey',
    'x-api-key',
    'Ocp-Apim-Subscription-Key',
    'signature',
    'credentials',
  ])('withholds %s', (key) => {
    expect(isSecretLogKey(key)).toBe(true);
  });

  it.each([
    'tokenId',
    'tokenHint',
    'sessionId',
    'runId',
    'errorClass',
    'status',
    'tokenCount',
    'credentialType',
  ])('keeps %s', (key) => {
    expect(isSecretLogKey(key)).toBe(false);
  });
});
