/*
 * The webhook queue's consumer: one delivery attempt per message (the receive count is the attempt
 * number). A failed attempt hides the message for the next wait of the schedule (ChangeMessage-
 * Visibility, up to 12 h) and is reported as a batch item failure; delivered, failed for good,
 * disabled by a 410 or addressed to a deleted webhook, the message is done.
 */
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { logger } from '../observability/logger.ts';
import { deliveryMessageSchema, makeDeliver } from '../webhooks/deliver.ts';
import { postToTarget } from '../webhooks/post.ts';
import { nanoidGenerator, systemClock } from '../wiring/clock.ts';
import {
  deliveryQueueFromEnv,
  webhookRepositoryFromEnv,
  webhookSecretKeyFromEnv,
  webhookUrlCheckFromEnv,
} from '../wiring/webhooks.ts';

const queue = deliveryQueueFromEnv();
const deliver = makeDeliver({
  webhooks: webhookRepositoryFromEnv(),
  secretKey: webhookSecretKeyFromEnv(),
  checkUrl: webhookUrlCheckFromEnv(),
  post: postToTarget,
  clock: systemClock,
  ids: nanoidGenerator,
});

export const handler = async (event: SQSEvent): Promise<SQSBatchResponse> => {
  // Every message at once: a receiver that hangs holds up none of the others.
  const results = await Promise.all(
    event.Records.map(async (record) => {
      let body: unknown;
      try {
        body = JSON.parse(record.body);
      } catch {
        body = undefined;
      }
      const message = deliveryMessageSchema.safeParse(body);
      if (!message.success) {
        logger.error('dropping a message that is not a webhook delivery', { messageId: record.messageId });
        return undefined;
      }
      const attempt = Number(record.attributes.ApproximateReceiveCount) || 1;
      const ids = { eventId: message.data.event.id, webhookId: message.data.webhookId, attempt };
      try {
        const outcome = await deliver(message.data, attempt);
        if (outcome.outcome !== 'retry') {
          if (outcome.outcome === 'failed')
            logger.warn('webhook delivery failed for good', { ...ids, reason: outcome.reason });
          return undefined;
        }
        logger.info('webhook delivery failed; retried later', {
          ...ids,
          retryInSeconds: outcome.afterSeconds,
          reason: outcome.reason,
        });
        await queue.hide(record.receiptHandle, outcome.afterSeconds);
      } catch (error) {
        logger.error('webhook delivery could not be attempted; retried after the visibility timeout', {
          ...ids,
          errorClass: (error as Error).name,
          errorMessage: (error as Error).message,
        });
      }
      return { itemIdentifier: record.messageId };
    }),
  );
  return { batchItemFailures: results.filter((failure) => failure !== undefined) };
};
