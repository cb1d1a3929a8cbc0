/*
 * The SQS adapter of the guardrail queue: a check {pipelineId, rolloutId} asks for a rollout to be
 * judged (lambdas/handlers/judge-rollouts.ts). The functions that record executions load it on
 * their first check (guardrail-sender.ts), so a pipeline without a rollout never parses the client.
 */
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { GuardrailQueue } from '../core/ports/rollouts.ts';

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
