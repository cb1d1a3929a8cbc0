/**
 * The recording functions' guardrail queue, whose SQS client is loaded by the first check: the
 * checks still reach the guardrail queue with their team as the message group, and a missing
 * queue URL fails when the function starts, not on the first check.
 */
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { guardrailsFromEnv } from '../../../lambdas/sqs/guardrail-sender.ts';

const sqs = mockClient(SQSClient);
const URL = 'https://sqs.us-east-1.amazonaws.com/000000000000/guardrail-checks';

describe('the guardrail queue loaded on the first check', () => {
  beforeEach(() => {
    sqs.reset();
    sqs.on(SendMessageCommand).resolves({ MessageId: 'm-1' });
  });
  afterEach(() => {
    delete process.env.GUARDRAIL_QUEUE_URL;
  });

  it('sends each check to the guardrail queue, the team as its message group', async () => {
    process.env.GUARDRAIL_QUEUE_URL = URL;
    const { queue } = guardrailsFromEnv();

    await queue.send({ pipelineId: 'pipe-1', rolloutId: 'roll-1' }, 'team-a');
    await queue.send({ pipelineId: 'pipe-2', rolloutId: 'roll-2' }, 'team-b');

    expect(sqs.commandCalls(SendMessageCommand).map((call) => call.args[0].input)).toEqual([
      {
        QueueUrl: URL,
        MessageBody: '{"pipelineId":"pipe-1","rolloutId":"roll-1"}',
        MessageGroupId: 'team-a',
      },
      {
        QueueUrl: URL,
        MessageBody: '{"pipelineId":"pipe-2","rolloutId":"roll-2"}',
        MessageGroupId: 'team-b',
      },
    ]);
  });

  it('refuses to be made without the queue URL', () => {
    expect(() => guardrailsFromEnv()).toThrow(/GUARDRAIL_QUEUE_URL/);
  });
});
