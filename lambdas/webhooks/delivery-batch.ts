/*
 * A lane's webhook deliverer over one SQS batch: one attempt per message (the attempts made before
 * it was queued plus its receive count), every message at once. A failed attempt hides the message
 * for the next wait of the schedule (ChangeMessageVisibility, up to 12 h) and is reported as a batch
 * item failure; delivered, moved to the slow lane, failed for good, disabled by a 410 or addressed
 * to a deleted webhook, the message is done.
 */
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { logger } from '../observability/logger.ts';
import { attemptOf, type DeliverOutcome, type DeliveryMessage, deliveryMessageSchema } from './deliver.ts';

export interface DeliveryBatchDeps {
  deliver: (message: DeliveryMessage, attempt: number) => Promise<DeliverOutcome>;
  /** Hides a received message of this lane's queue for `seconds` (its next attempt). */
  hide: (receiptHandle: string, seconds: number) => Promise<void>;
}

/** The SQS handler of one lane. */
export function makeDeliveryBatch({ deliver, hide }: DeliveryBatchDeps) {
  return async (event: SQSEvent): Promise<SQSBatchResponse> => {
    // Every message at once: a receiver that hangs holds up none of the others of the batch.
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
        const attempt = attemptOf(message.data, Number(record.attributes.ApproximateReceiveCount) || 1);
        const ids = { eventId: message.data.event.id, webhookId: message.data.webhookId, attempt };
        try {
          const outcome = await deliver(message.data, attempt);
          if (outcome.outcome === 'moved')
            logger.info('webhook delivery moved to the slow lane', { ...ids, reason: outcome.reason });
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
          await hide(record.receiptHandle, outcome.afterSeconds);
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
}
