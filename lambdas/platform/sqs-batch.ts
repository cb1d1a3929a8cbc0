import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { type SynthesisJob, synthesisJobSchema } from '../core/schemas.ts';
import { logger } from './logger.ts';

/**
 * An SQS handler with partial batch failures: a record whose processing throws is reported back
 * and redelivered after the visibility timeout; the others are deleted. A body that is not a job
 * can never succeed, so it is logged and dropped instead of being retried into the DLQ.
 */
export function sqsJobHandler(processJob: (job: SynthesisJob, record: SQSRecord) => Promise<void>) {
  const processor = new BatchProcessor(EventType.SQS);
  const recordHandler = async (record: SQSRecord) => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(record.body);
    } catch {
      parsed = undefined;
    }
    const job = synthesisJobSchema.safeParse(parsed);
    if (!job.success) {
      logger.error('dropping a message that is not a synthesis job', { messageId: record.messageId });
      return;
    }
    await processJob(job.data, record);
  };
  return async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
    logger.addContext(context);
    return processPartialResponse(event, recordHandler, processor, {
      context,
      throwOnFullBatchFailure: false,
    });
  };
}
