/*
 * The SQS adapter of the guardrail queue: a check {pipelineId, rolloutId} asks for a rollout to be
 * judged (lambdas/handlers/judge-rollouts.ts), and the queue's URL setting.
 */
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { GuardrailQueue } from '../core/ports/rollouts.ts';
import type { QueueUrlVariable } from '../queues.ts';
import { readConfig } from '../wiring/config.ts';
import { queueUrl } from './sqs-queue.ts';

/** SQS adapter of GuardrailQueue; the team is the message group (a fair queue). */
export function makeSqsGuardrailQueue(client: SQSClient, url: string): GuardrailQueue {
  return {
    async send(check, teamId) {
      await client.send(
        new SendMessageCommand({
          QueueUrl: url,
          MessageBody: JSON.stringify({ pipelineId: check.pipelineId, rolloutId: check.rolloutId }),
          MessageGroupId: teamId,
        }),
      );
    },
  };
}

/** Where the guardrail queue's URL is (lambdas/queues.ts): its senders and its consumer, which hides checks. */
const URL_VARIABLE = 'GUARDRAIL_QUEUE_URL' satisfies QueueUrlVariable;

/** The guardrail queue's URL, from the environment. */
export function guardrailQueueUrlFromEnv(): string {
  return readConfig({ [URL_VARIABLE]: queueUrl })[URL_VARIABLE];
}

let sendClient: SQSClient | undefined;

/**
 * The client of the functions that record executions: the response waits for the send, so a
 * queue in trouble may cost at most two short attempts (a lost check waits for the sweeper),
 * never the SDK's default three attempts with backoff.
 */
export function guardrailSendClient(): SQSClient {
  sendClient ??= new SQSClient({
    maxAttempts: 2,
    requestHandler: { connectionTimeout: 1_000, requestTimeout: 2_000 },
  });
  return sendClient;
}
