/*
 * The outbox's reader: fed by the DynamoDB Stream of the events table (on AWS through an event
 * source mapping, locally by local/streams/), it queues one delivery per subscribed webhook and
 * puts each event on the event bus. In order; the first record that fails is reported with every
 * later one (partial batch failure), so the stream delivers them again: at least once.
 */
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { domainEventSchema } from '../core/events.ts';
import { nameEvents } from '../core/people.ts';
import { logger } from '../observability/logger.ts';
import { makeFanOut } from '../webhooks/deliver.ts';
import { peopleDirectoryFromEnv } from '../wiring/repositories.ts';
import {
  deliveryLanesFromEnv,
  eventBusFromEnv,
  NO_EVENT_BUS,
  webhookRepositoryFromEnv,
} from '../wiring/webhooks.ts';

const publish = eventBusFromEnv();
const people = peopleDirectoryFromEnv();
const fanOut = makeFanOut({
  webhooks: webhookRepositoryFromEnv(),
  enqueue: deliveryLanesFromEnv(),
  publish,
  nameActor: async (event) => {
    const [named] = await nameEvents(people, event.data.teamId, [event]);
    return named ?? event;
  },
});
if (publish === NO_EVENT_BUS)
  logger.info('no EVENT_BUS_NAME: events are not put on an event bus (the local stack has none)');

export const handler = async (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => {
  for (const record of event.Records) {
    // Only new events are sent; TTL expiries (REMOVE) and any update are not events.
    if (record.eventName !== 'INSERT' || !record.dynamodb?.NewImage) continue;
    const parsed = domainEventSchema.safeParse(
      unmarshall(record.dynamodb.NewImage as Parameters<typeof unmarshall>[0]),
    );
    if (!parsed.success) {
      logger.error('dropping an outbox item that is not an event', {
        sequenceNumber: record.dynamodb.SequenceNumber,
      });
      continue;
    }
    try {
      const webhooks = await fanOut(parsed.data);
      logger.debug('event fanned out', { eventId: parsed.data.id, eventType: parsed.data.type, webhooks });
    } catch (error) {
      logger.error('event fan-out failed; the stream delivers it again', {
        eventId: parsed.data.id,
        eventType: parsed.data.type,
        errorClass: (error as Error).name,
        errorMessage: (error as Error).message,
      });
      // Everything from this record on is retried (a stream is ordered per shard).
      return { batchItemFailures: [{ itemIdentifier: record.dynamodb.SequenceNumber ?? '' }] };
    }
  }
  return { batchItemFailures: [] };
};
