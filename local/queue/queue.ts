/**
 * An in-process queue with SQS standard-queue semantics for the local stack: at-least-once
 * delivery, visibility timeout and ChangeMessageVisibility, receive counts, maxReceiveCount → a
 * dead-letter queue, message retention, message attributes with SQS's MD5s (messages.ts), and
 * fair queueing by message group.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { MessageAttributeValue } from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';
import {
  md5Hex,
  md5OfMessageAttributes,
  SqsError,
  toEventAttributes,
  validateBody,
  validateMessageAttributes,
  validateMessageGroupId,
} from './messages.ts';

export { MAX_MESSAGE_BYTES, SqsError } from './messages.ts';

const DEFAULT_REGION = 'us-east-1';
const DEFAULT_ACCOUNT_ID = '000000000000';
/** SQS's defaults: a 30 s visibility timeout, four days of retention. */
const DEFAULT_VISIBILITY_TIMEOUT_MS = 30_000;
const DEFAULT_RETENTION_MS = 4 * 24 * 3600 * 1000;
const MAX_DELAY_SECONDS = 900;
const MAX_VISIBILITY_TIMEOUT_SECONDS = 43_200;
/** Messages sent without a MessageGroupId share one group among themselves. */
const NO_GROUP = '';
/** Records per receive, as SQS allows. */
export const MAX_BATCH_ENTRIES = 10;

export interface LocalQueueOptions {
  name: string;
  /** @default SQS's 30 s (local/queue/queues.ts gives each queue its declared one) */
  visibilityTimeoutMs?: number;
  /** A message older than this is dropped, as SQS deletes it. @default SQS's four days */
  retentionMs?: number;
  /** Receives before a message moves to `deadLetterQueue`: required with one, as in a redrive policy. */
  maxReceiveCount?: number;
  deadLetterQueue?: LocalQueue;
  region?: string;
  accountId?: string;
}

export interface SendOptions {
  delaySeconds?: number;
  /** The tenant: a fair queue shares deliveries across the groups that have messages waiting. */
  messageGroupId?: string;
  messageAttributes?: Record<string, MessageAttributeValue>;
}

export interface SentMessage {
  messageId: string;
  md5OfBody: string;
  md5OfMessageAttributes?: string;
}

/** A message as a receiver sees it: the SQS fields of one delivery. */
export interface ReceivedMessage {
  messageId: string;
  receiptHandle: string;
  body: string;
  receiveCount: number;
  record: SQSRecord;
}

export interface QueueCounts {
  /** Ready to be received now. */
  visible: number;
  /** Received and not yet deleted, within their visibility timeout. */
  inFlight: number;
  /** Sent with a delay that has not yet passed. */
  delayed: number;
}

interface StoredMessage {
  messageId: string;
  body: string;
  md5OfBody: string;
  messageGroupId: string | undefined;
  attributes: Record<string, MessageAttributeValue>;
  md5OfMessageAttributes: string | undefined;
  sentTimestamp: number;
  senderId: string;
  firstReceiveTimestamp: number | undefined;
  receiveCount: number;
  visibleAt: number;
  receiptHandle: string | undefined;
  deadLetterQueueSourceArn: string | undefined;
}

/** An in-process SQS standard queue. */
export class LocalQueue {
  readonly name: string;
  readonly region: string;
  readonly accountId: string;
  readonly arn: string;
  readonly visibilityTimeoutMs: number;
  readonly retentionMs: number;
  readonly maxReceiveCount: number;
  readonly deadLetterQueue: LocalQueue | undefined;
  private readonly messages = new Map<string, StoredMessage>();
  private readonly waiters = new Set<() => void>();

  constructor(options: LocalQueueOptions) {
    this.name = options.name;
    this.region = options.region ?? DEFAULT_REGION;
    this.accountId = options.accountId ?? DEFAULT_ACCOUNT_ID;
    this.arn = `arn:aws:sqs:${this.region}:${this.accountId}:${this.name}`;
    this.visibilityTimeoutMs = options.visibilityTimeoutMs ?? DEFAULT_VISIBILITY_TIMEOUT_MS;
    this.retentionMs = options.retentionMs ?? DEFAULT_RETENTION_MS;
    if (options.deadLetterQueue !== undefined && options.maxReceiveCount === undefined)
      throw new Error(`Queue ${options.name}: a dead-letter queue needs a maxReceiveCount.`);
    this.maxReceiveCount = options.maxReceiveCount ?? Number.POSITIVE_INFINITY;
    this.deadLetterQueue = options.deadLetterQueue;
  }

  /** Enqueues a message and returns its MessageId; throws an SqsError for what SQS would refuse. */
  send(body: string, options: SendOptions = {}): string {
    return this.sendMessage(body, options).messageId;
  }

  /** Enqueues a message and returns what SendMessage answers (id and MD5 digests). */
  sendMessage(body: string, options: SendOptions = {}): SentMessage {
    validateBody(body);
    const delaySeconds = options.delaySeconds ?? 0;
    if (!Number.isInteger(delaySeconds) || delaySeconds < 0 || delaySeconds > MAX_DELAY_SECONDS) {
      throw new SqsError(
        'InvalidParameterValue',
        `DelaySeconds must be an integer from 0 to ${MAX_DELAY_SECONDS}.`,
      );
    }
    const attributes = options.messageAttributes ?? {};
    validateMessageAttributes(attributes);
    validateMessageGroupId(options.messageGroupId);
    const now = Date.now();
    const message: StoredMessage = {
      messageId: randomUUID(),
      body,
      md5OfBody: md5Hex(Buffer.from(body, 'utf8')),
      messageGroupId: options.messageGroupId,
      attributes,
      md5OfMessageAttributes:
        Object.keys(attributes).length > 0 ? md5OfMessageAttributes(attributes) : undefined,
      sentTimestamp: now,
      senderId: 'AIDALOCALSTACKSENDER',
      firstReceiveTimestamp: undefined,
      receiveCount: 0,
      visibleAt: now + delaySeconds * 1000,
      receiptHandle: undefined,
      deadLetterQueueSourceArn: undefined,
    };
    this.enqueue(message);
    return {
      messageId: message.messageId,
      md5OfBody: message.md5OfBody,
      ...(message.md5OfMessageAttributes === undefined
        ? {}
        : { md5OfMessageAttributes: message.md5OfMessageAttributes }),
    };
  }

  /**
   * Receives up to `maxMessages` visible messages and hides them for the visibility timeout. A
   * message already received maxReceiveCount times moves to the dead-letter queue instead.
   *
   * Fair queueing, as SQS does for a standard queue whose messages carry a MessageGroupId: each
   * message goes to the group with the fewest messages in flight (ties: the group whose oldest
   * waiting message is oldest), so a group with a backlog cannot hold back a group that has
   * little in flight. Within a group, and with a single group, the oldest message comes first.
   */
  receive(maxMessages: number): ReceivedMessage[] {
    const now = Date.now();
    const waiting = this.receivableByGroup(now);
    const inFlight = this.inFlightByGroup(now);
    const received: ReceivedMessage[] = [];
    while (received.length < maxMessages) {
      const group = fairestGroup(waiting, inFlight);
      const message = group === undefined ? undefined : waiting.get(group)?.shift();
      if (group === undefined || message === undefined) break;
      if (waiting.get(group)?.length === 0) waiting.delete(group);
      inFlight.set(group, (inFlight.get(group) ?? 0) + 1);
      received.push(this.deliver(message, now));
    }
    return received;
  }

  /** Visible messages by group, each group oldest first; exhausted ones move to the DLQ on the way. */
  private receivableByGroup(now: number): Map<string, StoredMessage[]> {
    const waiting = new Map<string, StoredMessage[]>();
    for (const message of [...this.messages.values()]) {
      // SQS deletes a message its retention period has passed, received or not.
      if (message.sentTimestamp + this.retentionMs <= now) {
        this.messages.delete(message.messageId);
        continue;
      }
      if (message.visibleAt > now) continue;
      if (this.deadLetterQueue !== undefined && message.receiveCount >= this.maxReceiveCount) {
        this.moveToDeadLetterQueue(message, this.deadLetterQueue);
        continue;
      }
      const group = message.messageGroupId ?? NO_GROUP;
      waiting.set(group, [...(waiting.get(group) ?? []), message]);
    }
    return waiting;
  }

  private inFlightByGroup(now: number): Map<string, number> {
    const inFlight = new Map<string, number>();
    for (const message of this.messages.values()) {
      if (message.visibleAt <= now || message.receiptHandle === undefined) continue;
      const group = message.messageGroupId ?? NO_GROUP;
      inFlight.set(group, (inFlight.get(group) ?? 0) + 1);
    }
    return inFlight;
  }

  /** Hides `message` for the visibility timeout under a fresh receipt handle. */
  private deliver(message: StoredMessage, now: number): ReceivedMessage {
    message.receiveCount += 1;
    message.firstReceiveTimestamp ??= now;
    message.visibleAt = now + this.visibilityTimeoutMs;
    const receiptHandle = randomBytes(32).toString('base64url');
    message.receiptHandle = receiptHandle;
    return {
      messageId: message.messageId,
      receiptHandle,
      body: message.body,
      receiveCount: message.receiveCount,
      record: this.toRecord(message, receiptHandle),
    };
  }

  /** Deletes the message of the latest receipt handle; a stale handle deletes nothing. */
  delete(receiptHandle: string): boolean {
    for (const message of this.messages.values()) {
      if (message.receiptHandle === receiptHandle) {
        this.messages.delete(message.messageId);
        return true;
      }
    }
    return false;
  }

  /**
   * ChangeMessageVisibility: the message of the latest receipt handle becomes visible again in
   * `seconds` (0 to 43,200). A stale or unknown handle is refused, as SQS refuses it.
   */
  changeVisibility(receiptHandle: string, seconds: number): void {
    if (!Number.isInteger(seconds) || seconds < 0 || seconds > MAX_VISIBILITY_TIMEOUT_SECONDS) {
      throw new SqsError(
        'InvalidParameterValue',
        `Value ${seconds} for parameter VisibilityTimeout is invalid. Reason: Must be between 0 and ${MAX_VISIBILITY_TIMEOUT_SECONDS}.`,
      );
    }
    const message = [...this.messages.values()].find(
      (candidate) => candidate.receiptHandle === receiptHandle,
    );
    if (message === undefined || message.visibleAt <= Date.now()) {
      throw new SqsError(
        'InvalidParameterValue',
        `Value ${receiptHandle} for parameter ReceiptHandle is invalid. Reason: Message does not exist or is not available for visibility timeout change.`,
      );
    }
    message.visibleAt = Date.now() + seconds * 1000;
    if (seconds === 0) this.wakeWaiters();
  }

  /** Messages by state, like the queue's Approximate* attributes. */
  counts(): QueueCounts {
    const now = Date.now();
    const counts: QueueCounts = { visible: 0, inFlight: 0, delayed: 0 };
    for (const message of this.messages.values()) {
      if (message.visibleAt <= now) counts.visible += 1;
      else if (message.receiptHandle === undefined) counts.delayed += 1;
      else counts.inFlight += 1;
    }
    return counts;
  }

  /** Resolves when a message may have become receivable, or after `maxWaitMs`. */
  waitForMessages(maxWaitMs: number): { promise: Promise<void>; cancel(): void } {
    const untilVisible = this.millisUntilNextVisible();
    const waitMs = Math.max(0, Math.min(maxWaitMs, untilVisible));
    let wake: () => void = () => {};
    const promise = new Promise<void>((resolve) => {
      const timer = setTimeout(() => wake(), waitMs);
      wake = () => {
        clearTimeout(timer);
        this.waiters.delete(wake);
        resolve();
      };
      this.waiters.add(wake);
    });
    return { promise, cancel: () => wake() };
  }

  private millisUntilNextVisible(): number {
    const now = Date.now();
    let next = Number.POSITIVE_INFINITY;
    for (const message of this.messages.values()) next = Math.min(next, message.visibleAt - now);
    return next;
  }

  private enqueue(message: StoredMessage): void {
    this.messages.set(message.messageId, message);
    this.wakeWaiters();
  }

  /** Wakes pollers now rather than at their next poll: locally a job should start at once. */
  private wakeWaiters(): void {
    for (const wake of [...this.waiters]) wake();
  }

  private moveToDeadLetterQueue(message: StoredMessage, deadLetterQueue: LocalQueue): void {
    this.messages.delete(message.messageId);
    // Like SQS: same MessageId, body, attributes and SentTimestamp; the receive count carries over.
    deadLetterQueue.enqueue({
      ...message,
      visibleAt: Date.now(),
      receiptHandle: undefined,
      deadLetterQueueSourceArn: this.arn,
    });
  }

  private toRecord(message: StoredMessage, receiptHandle: string): SQSRecord {
    return {
      messageId: message.messageId,
      receiptHandle,
      body: message.body,
      attributes: {
        ApproximateReceiveCount: String(message.receiveCount),
        SentTimestamp: String(message.sentTimestamp),
        SenderId: message.senderId,
        ApproximateFirstReceiveTimestamp: String(message.firstReceiveTimestamp ?? message.sentTimestamp),
        ...(message.messageGroupId === undefined ? {} : { MessageGroupId: message.messageGroupId }),
        ...(message.deadLetterQueueSourceArn === undefined
          ? {}
          : { DeadLetterQueueSourceArn: message.deadLetterQueueSourceArn }),
      },
      messageAttributes: toEventAttributes(message.attributes),
      md5OfBody: message.md5OfBody,
      ...(message.md5OfMessageAttributes === undefined
        ? {}
        : { md5OfMessageAttributes: message.md5OfMessageAttributes }),
      eventSource: 'aws:sqs',
      eventSourceARN: this.arn,
      awsRegion: this.region,
    };
  }
}

/**
 * The group to deliver from next: fewest in flight, then the oldest waiting message (a map keeps
 * the order messages were first seen, and each group's list is oldest first).
 */
function fairestGroup(
  waiting: Map<string, StoredMessage[]>,
  inFlight: Map<string, number>,
): string | undefined {
  let best: { group: string; inFlight: number; sentTimestamp: number } | undefined;
  for (const [group, messages] of waiting) {
    const head = messages[0];
    if (head === undefined) continue;
    const count = inFlight.get(group) ?? 0;
    const fairer =
      best === undefined ||
      count < best.inFlight ||
      (count === best.inFlight && head.sentTimestamp < best.sentTimestamp);
    if (fairer) best = { group, inFlight: count, sentTimestamp: head.sentTimestamp };
  }
  return best?.group;
}
