import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { JobQueue } from '../core/ports.ts';

/** SQS adapter of JobQueue. The job id doubles as the message's dedup-friendly attribute. */
export function makeSqsJobQueue(client: SQSClient, queueUrl: string): JobQueue {
  return {
    async send(job) {
      await client.send(
        new SendMessageCommand({
          QueueUrl: queueUrl,
          MessageBody: JSON.stringify(job),
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
