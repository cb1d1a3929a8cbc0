/*
 * The deletion job (lifecycle queue consumer): removes a deleted pipeline's items in bounded steps
 * until its time runs short, then queues itself again; the receipt completes with exact counts.
 */
import type { Context, SQSEvent } from 'aws-lambda';
import { deletionJobSchema } from '../core/lifecycle.ts';
import { makeRunDeletion } from '../core/use-cases/lifecycle.ts';
import { logger } from '../observability/logger.ts';
import { lifecycleQueueFromEnv } from '../sqs/lifecycle-queue.ts';
import { getSqsClient } from '../sqs/sqs-queue.ts';
import { systemClock } from '../wiring/clock.ts';
import { deletionStoreFromEnv } from '../wiring/repositories.ts';

const runDeletion = makeRunDeletion({ deletions: deletionStoreFromEnv(), clock: systemClock });
const queue = lifecycleQueueFromEnv(getSqsClient());

/** Left for the last step and the re-queue: a step is one Query and at most 500 deletes. */
const SAFETY_MS = 15_000;

/**
 * One deletion job per record. A record that throws is delivered again by SQS (its message is not
 * deleted): the next delivery resumes from the receipt's progress.
 */
export const handler = async (event: SQSEvent, context: Context) => {
  const failures: Array<{ itemIdentifier: string }> = [];
  for (const record of event.Records) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(record.body);
    } catch {
      parsed = undefined;
    }
    const job = deletionJobSchema.safeParse(parsed);
    if (!job.success) {
      logger.error('deletion job dropped: its body is not a deletion job', { messageId: record.messageId });
      continue;
    }
    try {
      const result = await runDeletion(
        job.data.deletionId,
        () => context.getRemainingTimeInMillis() < SAFETY_MS,
      );
      if (result.outcome === 'continued') await queue.send(job.data);
      logger.info(`pipeline deletion ${result.outcome}`, {
        deletionId: job.data.deletionId,
        pipelineId: result.receipt?.pipelineId,
      });
    } catch (error) {
      logger.error('pipeline deletion step failed; it will be retried', {
        deletionId: job.data.deletionId,
        errorClass: error instanceof Error ? error.name : typeof error,
        errorMessage: error instanceof Error ? error.message : String(error),
      });
      failures.push({ itemIdentifier: record.messageId });
    }
  }
  return { batchItemFailures: failures };
};
