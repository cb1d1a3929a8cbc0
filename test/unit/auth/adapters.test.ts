import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SESv2Client, SendEmailCommand } from '@aws-sdk/client-sesv2';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { makeSesEmailSender } from '../../../lambdas/wiring/email.ts';
import { sessionSigningKeyFromEnv } from '../../../lambdas/wiring/session-secret.ts';

const secretsManager = mockClient(SecretsManagerClient);
const ses = mockClient(SESv2Client);
const ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:session-AbCdEf';

beforeEach(() => {
  secretsManager.reset();
  ses.reset();
});

describe('the session signing key', () => {
  it('comes from Secrets Manager when SESSION_SECRET_ARN is set, read once per container', async () => {
    secretsManager.on(GetSecretValueCommand).resolves({ SecretString: 'k'.repeat(64) });
    const key = sessionSigningKeyFromEnv({ SESSION_SECRET_ARN: ARN, AWS_REGION: 'us-east-1' });
    expect((await key()).toString()).toBe('k'.repeat(64));
    await key();
    expect(secretsManager.commandCalls(GetSecretValueCommand)).toHaveLength(1);
    expect(secretsManager.commandCalls(GetSecretValueCommand)[0]?.args[0].input).toEqual({ SecretId: ARN });
  });

  it('comes from SESSION_SECRET locally, which a real Lambda runtime refuses', async () => {
    await expect(sessionSigningKeyFromEnv({ SESSION_SECRET: 's'.repeat(40) })()).resolves.toHaveLength(40);
    await expect(
      sessionSigningKeyFromEnv({
        SESSION_SECRET: 's'.repeat(40),
        AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x',
      })(),
    ).rejects.toThrow(/local use only/);
    await expect(sessionSigningKeyFromEnv({ SESSION_SECRET: 'short' })()).rejects.toThrow(/32 characters/);
    await expect(sessionSigningKeyFromEnv({})()).rejects.toThrow(/SESSION_SECRET_ARN/);
  });
});

describe('the SES email sender', () => {
  it('sends a plain-text email from the configured identity', async () => {
    ses.on(SendEmailCommand).resolves({ MessageId: 'm' });
    await makeSesEmailSender(new SESv2Client({ region: 'us-east-1' }), 'no-reply@example.com').send({
      to: 'ada@example.test',
      subject: 'Your sign-in link',
      text: 'hello',
    });
    expect(ses.commandCalls(SendEmailCommand)[0]?.args[0].input).toEqual({
      FromEmailAddress: 'no-reply@example.com',
      Destination: { ToAddresses: ['ada@example.test'] },
      Content: {
        Simple: {
          Subject: { Data: 'Your sign-in link', Charset: 'UTF-8' },
          Body: { Text: { Data: 'hello', Charset: 'UTF-8' } },
        },
      },
    });
  });
});
