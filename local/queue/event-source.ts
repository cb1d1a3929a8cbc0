/**
 * The Lambda SQS event source of the local stack: polls a LocalQueue and invokes a function with
 * batches, up to `maxConcurrency` at once, with ReportBatchItemFailures. A failed or timed-out
 * invocation leaves its whole batch to reappear after the visibility timeout, as on Lambda. Each
 * batch is what the queue's receive hands out, fairly across message groups: while every
 * invocation is busy nothing is received, so a group that sends later is next when one ends.
 */
import type { SQSEvent } from 'aws-lambda';
import { z } from 'zod';
import { type LocalQueue, MAX_BATCH_ENTRIES, type ReceivedMessage } from './queue.ts';

/** Lambda's largest batch from a standard queue, with a batching window. */
const MAX_WINDOWED_BATCH_SIZE = 10_000;

/** Invokes the consuming function with an event; rejects when the invocation fails or times out. */
export type InvokeFunction = (event: SQSEvent) => Promise<unknown>;

export interface EventSourceOptions {
  /** Records per invocation: at most 10 like an SQS event source without a batching window, 10,000 with one. */
  batchSize: number;
  /**
   * Lambda's MaximumBatchingWindowInSeconds: once a first record is received, keeps receiving for
   * up to this long (or until batchSize) before invoking, so a burst arrives as one batch.
   */
  maxBatchingWindowSeconds?: number;
  /** Concurrent invocations (the event source's maxConcurrency). */
  maxConcurrency?: number;
  /** Fallback poll; sends and visibility changes to 0 wake the poller at once anyway. */
  pollIntervalMs?: number;
  /** Named in the log line of a failed batch. */
  functionName: string;
  /** Where failed invocations are reported; stderr by default. */
  log?: (line: string) => void;
}

/** Polls `queue` and invokes `invoke` with its batches until stop(). */
export function startEventSource(
  queue: LocalQueue,
  invoke: InvokeFunction,
  options: EventSourceOptions,
): EventSource {
  return new EventSource(queue, invoke, options);
}

export class EventSource {
  private running = true;
  private readonly inFlight = new Set<Promise<void>>();
  private currentWait: { cancel(): void } | undefined;
  private readonly loop: Promise<void>;
  private readonly batchSize: number;
  private readonly batchingWindowMs: number;
  private readonly maxConcurrency: number;
  private readonly pollIntervalMs: number;
  private readonly functionName: string;
  private readonly log: (line: string) => void;

  constructor(
    private readonly queue: LocalQueue,
    private readonly invokeFunction: InvokeFunction,
    options: EventSourceOptions,
  ) {
    this.batchingWindowMs = Math.max(0, (options.maxBatchingWindowSeconds ?? 0) * 1000);
    const maxBatchSize = this.batchingWindowMs > 0 ? MAX_WINDOWED_BATCH_SIZE : MAX_BATCH_ENTRIES;
    if (!Number.isInteger(options.batchSize) || options.batchSize < 1 || options.batchSize > maxBatchSize) {
      throw new RangeError(`batchSize must be an integer from 1 to ${maxBatchSize}`);
    }
    this.batchSize = options.batchSize;
    this.maxConcurrency = Math.max(1, options.maxConcurrency ?? 2);
    this.pollIntervalMs = options.pollIntervalMs ?? 1_000;
    this.functionName = options.functionName;
    this.log = options.log ?? ((line) => process.stderr.write(`${line}\n`));
    this.loop = this.poll();
  }

  /** Stops polling and resolves once every in-flight invocation has settled. */
  async stop(): Promise<void> {
    this.running = false;
    this.currentWait?.cancel();
    await this.loop;
    await Promise.all(this.inFlight);
  }

  private async poll(): Promise<void> {
    while (this.running) {
      if (this.inFlight.size >= this.maxConcurrency) {
        await Promise.race(this.inFlight);
        continue;
      }
      const batch = this.queue.receive(Math.min(MAX_BATCH_ENTRIES, this.batchSize));
      if (batch.length === 0) {
        await this.waitForMessages(this.pollIntervalMs);
        continue;
      }
      if (this.batchingWindowMs > 0) await this.fillWithin(batch, Date.now() + this.batchingWindowMs);
      if (!this.running) return; // what was received reappears after its visibility timeout
      const invocation = this.invoke(batch).finally(() => this.inFlight.delete(invocation));
      this.inFlight.add(invocation);
    }
  }

  private async waitForMessages(ms: number): Promise<void> {
    const wait = this.queue.waitForMessages(ms);
    this.currentWait = wait;
    await wait.promise;
    this.currentWait = undefined;
  }

  /** Receives more into `batch` (10 a receive, as SQS hands them out) until it is full or `deadline`. */
  private async fillWithin(batch: ReceivedMessage[], deadline: number): Promise<void> {
    while (this.running && batch.length < this.batchSize) {
      const more = this.queue.receive(Math.min(MAX_BATCH_ENTRIES, this.batchSize - batch.length));
      if (more.length > 0) {
        batch.push(...more);
        continue;
      }
      const left = deadline - Date.now();
      if (left <= 0) return;
      await this.waitForMessages(left);
    }
  }

  private async invoke(batch: ReceivedMessage[]): Promise<void> {
    const event: SQSEvent = { Records: batch.map((message) => message.record) };
    let failed: Set<string>;
    try {
      const response = await this.invokeFunction(event);
      failed = failedMessageIds(response, batch);
    } catch (error) {
      // Lambda retries the whole batch: nothing is deleted, everything reappears after the timeout.
      this.log(
        `[queue ${this.queue.name}] ${this.functionName} failed a batch of ${batch.length}: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`,
      );
      return;
    }
    for (const message of batch) {
      if (!failed.has(message.messageId)) this.queue.delete(message.receiptHandle);
    }
  }
}

const batchResponseSchema = z
  .object({ batchItemFailures: z.array(z.object({ itemIdentifier: z.string().min(1) })).nullish() })
  .nullable();

/**
 * Reads a ReportBatchItemFailures response the way Lambda does: nothing, null, `{}` or an empty or
 * null list is success; an empty, missing or unknown itemIdentifier, or a response that is not an
 * object, fails the whole batch.
 */
function failedMessageIds(response: unknown, batch: ReceivedMessage[]): Set<string> {
  // Lambda sees the response as JSON: undefined values vanish as they would on the wire.
  const serialized = response === undefined ? 'null' : JSON.stringify(response);
  const parsed = batchResponseSchema.safeParse(JSON.parse(serialized));
  if (!parsed.success) throw new Error(`malformed batch response: ${serialized}`);
  const ids = new Set(batch.map((message) => message.messageId));
  const failed = new Set<string>();
  for (const { itemIdentifier } of parsed.data?.batchItemFailures ?? []) {
    if (!ids.has(itemIdentifier))
      throw new Error(`batchItemFailures names ${itemIdentifier}, not in the batch`);
    failed.add(itemIdentifier);
  }
  return failed;
}
