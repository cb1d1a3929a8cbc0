/*
 * The relay of carried events: fed by the streams of the runs and the settings tables (on AWS
 * through event source mappings that pass only writes whose new image holds an event, locally by
 * local/streams/ with the same test), it writes each event a one-item change carried into the
 * events table, once. From there the deliverer sends it and the audit log lists it. In order; the
 * first record that fails is reported with every later one (partial batch failure), so the stream
 * delivers them again.
 */
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { logger } from '../observability/logger.ts';
import { carriedEvent } from '../store/events.ts';
import { carriedEventRelayFromEnv } from '../wiring/repositories.ts';

const relay = carriedEventRelayFromEnv();

export const handler = async (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => {
  for (const record of event.Records) {
    const sequenceNumber = record.dynamodb?.SequenceNumber ?? '';
    let carried: ReturnType<typeof carriedEvent>;
    try {
      carried = record.dynamodb ? carriedEvent(record.dynamodb) : null;
    } catch (error) {
      // Written by our own code only: a person must look; retrying cannot mend it.
      logger.error('dropping a write whose carried event is not an event', {
        sequenceNumber,
        errorMessage: (error as Error).message,
      });
      continue;
    }
    if (carried === null) continue;
    try {
      const outcome = await relay(carried);
      logger.debug('carried event relayed', { eventId: carried.id, eventType: carried.type, outcome });
    } catch (error) {
      logger.error('relaying a carried event failed; the stream delivers it again', {
        eventId: carried.id,
        eventType: carried.type,
        errorClass: (error as Error).name,
        errorMessage: (error as Error).message,
      });
      return { batchItemFailures: [{ itemIdentifier: sequenceNumber }] };
    }
  }
  return { batchItemFailures: [] };
};
