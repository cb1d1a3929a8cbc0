/**
 * An SQS handler with partial batch failures for the synthesis queue and its DLQ. A record that
 * fails is logged once (ERROR, with the ids a person needs), counted, hidden again for a backoff of
 * seconds rather than the queue's long visibility timeout, and reported back for redelivery; the
 * others are deleted. A body that is not a job can never succeed: it is logged and dropped.
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { type SynthesisJob, synthesisJobSchema } from '../core/schemas/runs.ts';
import { logger } from '../observability/logger.ts';
import { countMetric, METRIC } from '../observability/metrics.ts';

/** Thrown by a job processor to have the job delivered again after `retryAfterSeconds`. */
export class RetryLater extends Error {
  override name = 'RetryLater';

  constructor(
    message: string,
    readonly retryAfterSeconds: number | undefined,
    /** Ids for the log line (pipelineId, synthesisHandler…); never a secret. */
    readonly details: Record<string, string | number | undefined>,
    options: { cause?: unknown } = {},
  ) {
    super(message, options);
  }
}

/** Backoff for the n-th failed receive: 5 s, 15 s, 45 s, 135 s…, at most 5 minutes, ±20 % jitter. */
function backoffSeconds(receiveCount: number, random: () => number = Math.random): number {
  const base = 5 * 3 ** Math.max(0, Math.min(10, receiveCount - 1));
  return Math.min(300, Math.max(1, Math.round(base * (0.8 + 0.4 * random()))));
}

/** Hides a failed record for `seconds`; on AWS, SQS ChangeMessageVisibility on the source queue. */
export type ChangeVisibility = (record: SQSRecord, seconds: number) => Promise<void>;

export interface SqsJobHandlerOptions {
  /** What the function is, for its log lines: "synthesis job", "dead synthesis job". */
  what: string;
  /** Without it a failed record waits out the queue's visibility timeout. */
  changeVisibility?: ChangeVisibility;
}

function describe(error: unknown): { errorClass: string; errorMessage: string } {
  const cause = error instanceof RetryLater && error.cause instanceof Error ? error.cause : error;
  return cause instanceof Error
    ? { errorClass: cause.name, errorMessage: error instanceof Error ? error.message : String(error) }
    : { errorClass: typeof cause, errorMessage: String(cause) };
}

export function sqsJobHandler(
  processJob: (job: SynthesisJob, record: SQSRecord) => Promise<void>,
  options: SqsJobHandlerOptions,
) {
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
      logger.error(`dropping a message that is not a ${options.what}`, { messageId: record.messageId });
      return;
    }
    try {
      await processJob(job.data, record);
    } catch (error) {
      const receiveCount = Number(record.attributes.ApproximateReceiveCount) || 1;
      const retryInSeconds =
        error instanceof RetryLater && error.retryAfterSeconds !== undefined
          ? Math.min(43_200, Math.max(0, error.retryAfterSeconds))
          : backoffSeconds(receiveCount);
      logger.error(`${options.what} failed; it will be retried`, {
        runId: job.data.runId,
        jobId: job.data.jobId,
        ...(error instanceof RetryLater ? error.details : {}),
        messageId: record.messageId,
        receiveCount,
        retryInSeconds,
        ...describe(error),
      });
      countMetric(METRIC.jobErrors);
      countMetric(METRIC.jobRetries);
      if (options.changeVisibility) {
        try {
          await options.changeVisibility(record, retryInSeconds);
        } catch (visibilityError) {
          logger.warn('could not shorten the visibility timeout; the job waits for the queue default', {
            runId: job.data.runId,
            messageId: record.messageId,
            errorClass: (visibilityError as Error).name,
          });
        }
      }
      throw error;
    }
  };
  return async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
    logger.addContext(context);
    return processPartialResponse(event, recordHandler, processor, {
      context,
      throwOnFullBatchFailure: false,
    });
  };
}
