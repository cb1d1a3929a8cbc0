/*
 * The SQS adapter of the synthesis JobQueue: sending jobs, the queue URL setting, and
 * hiding a received message again for a backoff.
 */
import { ChangeMessageVisibilityCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';
import type { JobQueue } from '../core/ports/runs.ts';

export { queueUrl } from './queue-url.ts';

/**
 * SQS adapter of JobQueue. The job id doubles as the message's dedup-friendly attribute. The team
 * is the message group: on a standard queue that makes it a fair queue, where SQS keeps the other
 * teams' jobs moving while one team's burst waits behind itself.
 */
export function makeSqsJobQueue(client: SQSClient, queueUrl: string): JobQueue {
  return {
    async send(job) {
      await client.send(
        new SendMessageCommand({
          QueueUrl: queueUrl,
          MessageBody: JSON.stringify(job),
          MessageGroupId: job.teamId,
          MessageAttributes: { jobId: { DataType: 'String', StringValue: job.jobId } },
        }),
      );
    },
  };
}

let sqsClient: SQSClient | undefined;

/** One SQS client per container; the SDK's own retries cover brief throttling. */
export function getSqsClient(): SQSClient {
  sqsClient ??= new SQSClient({});
  return sqsClient;
}

/** Hides a received message for `seconds` (ChangeMessageVisibility on the queue it came from). */
export function makeVisibilityChanger(client: SQSClient, queueUrl: string) {
  return async (record: SQSRecord, seconds: number): Promise<void> => {
    await client.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: queueUrl,
        ReceiptHandle: record.receiptHandle,
        VisibilityTimeout: seconds,
      }),
    );
  };
}
