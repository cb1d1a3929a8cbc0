/*
 * The SQS adapter of the data-lifecycle queue (a pipeline's deletion job, which re-queues itself
 * step after step): sending a job, and its URL setting.
 */
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { DeletionQueue } from '../core/lifecycle.ts';
import type { QueueUrlVariable } from '../queues.ts';
import { readConfig } from '../wiring/config.ts';
import { queueUrl } from './sqs-queue.ts';

/** SQS adapter of DeletionQueue. */
export function makeSqsDeletionQueue(client: SQSClient, url: string): DeletionQueue {
  return {
    async send(job) {
      await client.send(new SendMessageCommand({ QueueUrl: url, MessageBody: JSON.stringify(job) }));
    },
  };
}

/** Where the lifecycle queue's URL is (lambdas/queues.ts): functions whose access sends to it. */
const URL_VARIABLE = 'LIFECYCLE_QUEUE_URL' satisfies QueueUrlVariable;

/** The lifecycle queue, at its URL from the environment. */
export function lifecycleQueueFromEnv(client: SQSClient): DeletionQueue {
  return makeSqsDeletionQueue(client, readConfig({ [URL_VARIABLE]: queueUrl })[URL_VARIABLE]);
}
