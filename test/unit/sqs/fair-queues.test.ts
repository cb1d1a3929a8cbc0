/**
 * The queue table's `fair` (lambdas/queues.ts) is what the senders do: a fair queue's sender gives
 * each message its team as MessageGroupId, so SQS shares deliveries across teams; the sender of
 * any other queue gives none.
 */
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { QUEUES, type WorkQueueName } from '../../../lambdas/queues.ts';
import { guardrailQueueFromEnv } from '../../../lambdas/sqs/guardrail-sender.ts';
import { makeSqsDeletionQueue } from '../../../lambdas/sqs/lifecycle-queue.ts';
import { makeSqsJobQueue } from '../../../lambdas/sqs/sqs-queue.ts';
import type { DeliveryMessage } from '../../../lambdas/webhooks/deliver.ts';
import { deliveryQueueFromEnv } from '../../../lambdas/wiring/webhooks.ts';

const sqs = mockClient(SQSClient);
const URL = 'https://sqs.us-east-1.amazonaws.com/000000000000/q';
const TEAM = 'team-a';

/** One message of team-a, sent by each queue's sending adapter (every work queue must have one). */
const SEND: Record<WorkQueueName, (client: SQSClient) => Promise<void>> = {
  'synthesis-jobs': (client) =>
    makeSqsJobQueue(client, URL).send({ runId: 'run-000000000000000001', jobId: 'job-1', teamId: TEAM }),
  // As the recording functions send it: the SQS adapter loaded on the first check.
  'guardrail-checks': async () => {
    process.env.GUARDRAIL_QUEUE_URL = URL;
    await guardrailQueueFromEnv().send({ pipelineId: 'pipe-1', rolloutId: 'roll-1' }, TEAM);
  },
  'lifecycle-jobs': (client) => makeSqsDeletionQueue(client, URL).send({ deletionId: 'del-1' }),
  'webhook-deliveries': async () => {
    process.env.WEBHOOK_QUEUE_URL = URL;
    const message = { teamId: TEAM, webhookId: 'wh-1', event: { id: 'evt-1' } } as unknown as DeliveryMessage;
    await deliveryQueueFromEnv().enqueue([message]);
  },
  'webhook-slow-deliveries': async () => {
    process.env.WEBHOOK_SLOW_QUEUE_URL = URL;
    const message = { teamId: TEAM, webhookId: 'wh-1', event: { id: 'evt-1' } } as unknown as DeliveryMessage;
    await deliveryQueueFromEnv('slow').enqueue([message]);
  },
};

describe('fair queues', () => {
  beforeEach(() => {
    sqs.reset();
    sqs.on(SendMessageCommand).resolves({ MessageId: 'm-1' });
  });
  afterEach(() => {
    delete process.env.WEBHOOK_QUEUE_URL;
    delete process.env.GUARDRAIL_QUEUE_URL;
    delete process.env.WEBHOOK_SLOW_QUEUE_URL;
  });

  it.each(QUEUES.flatMap((queue) => (queue.kind === 'work' ? [queue] : [])))(
    '$name: fair $fair, and its sender gives a message group exactly then',
    async (queue) => {
      await SEND[queue.name](new SQSClient({ region: 'us-east-1' }));

      const [call] = sqs.commandCalls(SendMessageCommand);
      expect(call?.args[0].input.MessageGroupId).toBe(queue.fair ? TEAM : undefined);
    },
  );
});
