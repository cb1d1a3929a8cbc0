/** The SQS adapter of JobQueue: what SendMessage carries, the team as the fair queue's message group. */
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { makeSqsJobQueue } from '../../../lambdas/sqs/sqs-queue.ts';

const sqs = mockClient(SQSClient);
const QUEUE_URL = 'https://sqs.us-east-1.amazonaws.com/000000000000/synthesis-jobs';

describe('makeSqsJobQueue', () => {
  beforeEach(() => {
    sqs.reset();
    sqs.on(SendMessageCommand).resolves({ MessageId: 'm-1' });
  });

  it('sends the job with its team as the message group, so one team’s burst does not delay the others', async () => {
    const queue = makeSqsJobQueue(new SQSClient({ region: 'us-east-1' }), QUEUE_URL);

    await queue.send({ runId: 'run-000000000000000001', jobId: 'job-1', teamId: 'team-a' });

    const [call] = sqs.commandCalls(SendMessageCommand);
    expect(call?.args[0].input).toEqual({
      QueueUrl: QUEUE_URL,
      MessageBody: JSON.stringify({ runId: 'run-000000000000000001', jobId: 'job-1', teamId: 'team-a' }),
      MessageGroupId: 'team-a',
      MessageAttributes: { jobId: { DataType: 'String', StringValue: 'job-1' } },
    });
  });
});
