/**
 * An in-process queue with SQS semantics and the Lambda SQS event source that drains it, for the
 * local stack: at-least-once delivery, visibility timeout, receive counts, maxReceiveCount → a
 * dead-letter queue, batches and ReportBatchItemFailures. Plus a small HTTP endpoint speaking the
 * SQS AWS JSON 1.0 protocol, so the handlers' unchanged SQSClient can send to it.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { MessageAttributeValue } from '@aws-sdk/client-sqs';
import type { Context, SQSEvent, SQSMessageAttributes, SQSRecord } from 'aws-lambda';
import { z } from 'zod';
import { MAX_RECEIVE_COUNT, WORKER_TIMEOUT_SECONDS } from '../lambdas/routes.ts';
import { createLambdaContext } from './gateway.ts';
import { describeError, withTimeout } from './invoke.ts';

const DEFAULT_REGION = 'us-east-1';
const DEFAULT_ACCOUNT_ID = '000000000000';
/** SQS's limit since August 2025 (it was 256 KiB before). */
const MAX_MESSAGE_BYTES = 1024 * 1024;
const MAX_DELAY_SECONDS = 900;
const MAX_MESSAGE_ATTRIBUTES = 10;
const MAX_BATCH_ENTRIES = 10;

/** An SQS-style client error; `code` is the SQS error name (e.g. `InvalidMessageContents`). */
export class SqsError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = code;
  }
}

export interface LocalQueueOptions {
  name: string;
  /** Defaults to six times the worker's timeout, as the CDK stack sets it. */
  visibilityTimeoutMs?: number;
  /** Receives before a message moves to `deadLetterQueue`; only applies when one is given. */
  maxReceiveCount?: number;
  deadLetterQueue?: LocalQueue;
  region?: string;
  accountId?: string;
}

export interface SendOptions {
  delaySeconds?: number;
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

/**
 * A worker Lambda's handler: `(event: SQSEvent, context) => Promise<SQSBatchResponse | void>`. Its
 * result is typed unknown because, like Lambda's event source, the poller checks it at run time.
 */
export type SqsLambdaHandler = (event: SQSEvent, context: Context) => unknown;

export interface ConsumerOptions {
  /** Records per invocation, at most 10 like an SQS event source without a batching window. */
  batchSize: number;
  /** Concurrent invocations. */
  maxConcurrency?: number;
  /** Fallback poll; sends and visibility expiries wake the poller at once anyway. */
  pollIntervalMs?: number;
  functionName?: string;
  /** The function's timeout: an invocation that runs longer counts as failed, as on Lambda. */
  timeoutMs?: number;
  /** Where failed invocations are reported; stderr by default. */
  log?: (line: string) => void;
}

export interface QueueConsumer {
  /** Stops polling and resolves once every in-flight invocation has settled. */
  stop(): Promise<void>;
}

interface StoredMessage {
  messageId: string;
  body: string;
  md5OfBody: string;
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
  readonly maxReceiveCount: number;
  readonly deadLetterQueue: LocalQueue | undefined;
  private readonly messages = new Map<string, StoredMessage>();
  private readonly waiters = new Set<() => void>();
  private readonly consumers = new Set<QueueConsumer>();

  constructor(options: LocalQueueOptions) {
    this.name = options.name;
    this.region = options.region ?? DEFAULT_REGION;
    this.accountId = options.accountId ?? DEFAULT_ACCOUNT_ID;
    this.arn = `arn:aws:sqs:${this.region}:${this.accountId}:${this.name}`;
    this.visibilityTimeoutMs = options.visibilityTimeoutMs ?? WORKER_TIMEOUT_SECONDS * 6 * 1000;
    this.maxReceiveCount = options.maxReceiveCount ?? MAX_RECEIVE_COUNT;
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
    const now = Date.now();
    const message: StoredMessage = {
      messageId: randomUUID(),
      body,
      md5OfBody: md5Hex(Buffer.from(body, 'utf8')),
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
   */
  receive(maxMessages: number): ReceivedMessage[] {
    const now = Date.now();
    const received: ReceivedMessage[] = [];
    for (const message of this.messages.values()) {
      if (received.length >= maxMessages) break;
      if (message.visibleAt > now) continue;
      if (this.deadLetterQueue !== undefined && message.receiveCount >= this.maxReceiveCount) {
        this.moveToDeadLetterQueue(message, this.deadLetterQueue);
        continue;
      }
      message.receiveCount += 1;
      message.firstReceiveTimestamp ??= now;
      message.visibleAt = now + this.visibilityTimeoutMs;
      message.receiptHandle = randomBytes(32).toString('base64url');
      received.push({
        messageId: message.messageId,
        receiptHandle: message.receiptHandle,
        body: message.body,
        receiveCount: message.receiveCount,
        record: this.toRecord(message, message.receiptHandle),
      });
    }
    return received;
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

  /** Polls this queue like a Lambda SQS event source with ReportBatchItemFailures and invokes `handler`. */
  attachConsumer(handler: SqsLambdaHandler, options: ConsumerOptions): QueueConsumer {
    const consumer = new EventSourcePoller(this, handler, options);
    this.consumers.add(consumer);
    const stop = async () => {
      this.consumers.delete(consumer);
      await consumer.stop();
    };
    return { stop };
  }

  /** Stops every attached consumer and waits for their in-flight invocations. */
  async stop(): Promise<void> {
    const consumers = [...this.consumers];
    this.consumers.clear();
    await Promise.all(consumers.map((consumer) => consumer.stop()));
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
    // Wake pollers now rather than at their next poll: locally a job should start at once.
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

class EventSourcePoller implements QueueConsumer {
  private running = true;
  private readonly inFlight = new Set<Promise<void>>();
  private currentWait: { cancel(): void } | undefined;
  private readonly loop: Promise<void>;
  private readonly batchSize: number;
  private readonly maxConcurrency: number;
  private readonly pollIntervalMs: number;
  private readonly functionName: string;
  private readonly timeoutMs: number;
  private readonly log: (line: string) => void;

  constructor(
    private readonly queue: LocalQueue,
    private readonly handler: SqsLambdaHandler,
    options: ConsumerOptions,
  ) {
    if (
      !Number.isInteger(options.batchSize) ||
      options.batchSize < 1 ||
      options.batchSize > MAX_BATCH_ENTRIES
    ) {
      throw new RangeError(`batchSize must be an integer from 1 to ${MAX_BATCH_ENTRIES}`);
    }
    this.batchSize = options.batchSize;
    this.maxConcurrency = Math.max(1, options.maxConcurrency ?? 2);
    this.pollIntervalMs = options.pollIntervalMs ?? 1_000;
    this.functionName = options.functionName ?? `${queue.name}-consumer`;
    this.timeoutMs = options.timeoutMs ?? WORKER_TIMEOUT_SECONDS * 1000;
    this.log = options.log ?? ((line) => process.stderr.write(`${line}\n`));
    this.loop = this.poll();
  }

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
      const batch = this.queue.receive(this.batchSize);
      if (batch.length === 0) {
        const wait = this.queue.waitForMessages(this.pollIntervalMs);
        this.currentWait = wait;
        await wait.promise;
        this.currentWait = undefined;
        continue;
      }
      const invocation = this.invoke(batch).finally(() => this.inFlight.delete(invocation));
      this.inFlight.add(invocation);
    }
  }

  private async invoke(batch: ReceivedMessage[]): Promise<void> {
    const context = createLambdaContext({
      functionName: this.functionName,
      timeoutMs: this.timeoutMs,
      region: this.queue.region,
      accountId: this.queue.accountId,
    });
    const event: SQSEvent = { Records: batch.map((message) => message.record) };
    let failed: Set<string>;
    try {
      const response = await withTimeout(Promise.resolve(this.handler(event, context)), this.timeoutMs);
      failed = failedMessageIds(response, batch);
    } catch (error) {
      // Lambda retries the whole batch: nothing is deleted, everything reappears after the timeout.
      this.log(
        `[queue ${this.queue.name}] ${this.functionName} failed a batch of ${batch.length}: ${describeError(error)}`,
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

function md5Hex(data: Uint8Array): string {
  return createHash('md5').update(data).digest('hex');
}

function validateBody(body: string): void {
  if (body.length === 0) throw new SqsError('InvalidParameterValue', 'The message body must not be empty.');
  if (Buffer.byteLength(body, 'utf8') > MAX_MESSAGE_BYTES) {
    throw new SqsError(
      'InvalidParameterValue',
      `The message body must be at most ${MAX_MESSAGE_BYTES} bytes.`,
    );
  }
  if (!hasOnlyAllowedCharacters(body)) {
    throw new SqsError('InvalidMessageContents', 'The message contains characters outside the allowed set.');
  }
}

/** SQS accepts #x9 | #xA | #xD | #x20-#xD7FF | #xE000-#xFFFD | #x10000-#x10FFFF. */
function hasOnlyAllowedCharacters(body: string): boolean {
  for (const char of body) {
    const code = char.codePointAt(0) ?? 0;
    const allowed =
      code === 0x9 ||
      code === 0xa ||
      code === 0xd ||
      (code >= 0x20 && code <= 0xd7ff) ||
      (code >= 0xe000 && code <= 0xfffd) ||
      (code >= 0x10000 && code <= 0x10ffff);
    if (!allowed) return false;
  }
  return true;
}

function validateMessageAttributes(attributes: Record<string, MessageAttributeValue>): void {
  const names = Object.keys(attributes);
  if (names.length > MAX_MESSAGE_ATTRIBUTES) {
    throw new SqsError(
      'InvalidParameterValue',
      `At most ${MAX_MESSAGE_ATTRIBUTES} message attributes are allowed.`,
    );
  }
  for (const [name, value] of Object.entries(attributes)) {
    const dataType = value.DataType ?? '';
    const isBinary = dataType.startsWith('Binary');
    if (!/^(String|Number|Binary)(\..+)?$/.test(dataType)) {
      throw new SqsError('InvalidParameterValue', `Message attribute ${name} has an invalid DataType.`);
    }
    if (isBinary ? value.BinaryValue === undefined : value.StringValue === undefined) {
      throw new SqsError('InvalidParameterValue', `Message attribute ${name} has no value.`);
    }
  }
}

/** The MD5 of message attributes as SQS computes it (names sorted, length-prefixed fields). */
export function md5OfMessageAttributes(attributes: Record<string, MessageAttributeValue>): string {
  const parts: Buffer[] = [];
  const lengthPrefixed = (bytes: Uint8Array) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(bytes.length);
    parts.push(length, Buffer.from(bytes));
  };
  for (const name of Object.keys(attributes).sort()) {
    const value = attributes[name];
    if (value === undefined) continue;
    lengthPrefixed(Buffer.from(name, 'utf8'));
    lengthPrefixed(Buffer.from(value.DataType ?? '', 'utf8'));
    if (value.BinaryValue !== undefined) {
      parts.push(Buffer.from([2]));
      lengthPrefixed(value.BinaryValue);
    } else {
      parts.push(Buffer.from([1]));
      lengthPrefixed(Buffer.from(value.StringValue ?? '', 'utf8'));
    }
  }
  return md5Hex(Buffer.concat(parts));
}

function toEventAttributes(attributes: Record<string, MessageAttributeValue>): SQSMessageAttributes {
  const event: SQSMessageAttributes = {};
  for (const [name, value] of Object.entries(attributes)) {
    event[name] = {
      ...(value.StringValue === undefined ? {} : { stringValue: value.StringValue }),
      ...(value.BinaryValue === undefined
        ? {}
        : { binaryValue: Buffer.from(value.BinaryValue).toString('base64') }),
      stringListValues: [],
      binaryListValues: [],
      dataType: value.DataType ?? 'String',
    };
  }
  return event;
}

// ---------------------------------------------------------------------------------------------
// The SQS endpoint (AWS JSON 1.0), enough for SendMessage, SendMessageBatch and GetQueueUrl.

export interface SqsEndpointOptions {
  /** 0 or absent: a free port. */
  port?: number;
}

export interface SqsEndpoint {
  endpoint: string;
  queueUrl(name: string): string;
  stop(): Promise<void>;
}

/** The largest request we read: a full batch of maximum messages plus JSON overhead. */
const MAX_REQUEST_BYTES = 2 * MAX_MESSAGE_BYTES;

const wireAttributeSchema = z.object({
  DataType: z.string(),
  StringValue: z.string().optional(),
  BinaryValue: z.string().optional(),
});
const wireAttributesSchema = z.record(z.string(), wireAttributeSchema).optional();
const sendMessageSchema = z.object({
  QueueUrl: z.string(),
  MessageBody: z.string(),
  DelaySeconds: z.number().optional(),
  MessageAttributes: wireAttributesSchema,
});
const sendMessageBatchSchema = z.object({
  QueueUrl: z.string(),
  Entries: z.array(
    z.object({
      Id: z.string(),
      MessageBody: z.string(),
      DelaySeconds: z.number().optional(),
      MessageAttributes: wireAttributesSchema,
    }),
  ),
});
const getQueueUrlSchema = z.object({ QueueName: z.string() });

type WireAttributes = z.infer<typeof wireAttributesSchema>;

/** Serves `queues` over the SQS JSON protocol on 127.0.0.1 so an SQSClient with `endpoint` reaches them. */
export async function startSqsEndpoint(
  queues: Record<string, LocalQueue>,
  options: SqsEndpointOptions = {},
): Promise<SqsEndpoint> {
  const byName = new Map(Object.entries(queues));
  let endpoint = '';
  const queueUrl = (name: string): string => {
    const queue = byName.get(name);
    if (queue === undefined) throw new Error(`No local queue named ${name}`);
    return `${endpoint}/${queue.accountId}/${queue.name}`;
  };
  const findQueue = (url: string): LocalQueue => {
    // SQS routes by the URL's last path segment, the queue name.
    const name =
      url
        .split('/')
        .filter((segment) => segment.length > 0)
        .at(-1) ?? '';
    const queue = byName.get(name);
    if (queue === undefined) throw new SqsError('QueueDoesNotExist', 'The specified queue does not exist.');
    return queue;
  };

  const operations: Record<string, (input: unknown) => unknown> = {
    SendMessage(input) {
      const request = parseInput(sendMessageSchema, input);
      const sent = findQueue(request.QueueUrl).sendMessage(request.MessageBody, {
        delaySeconds: request.DelaySeconds,
        messageAttributes: fromWireAttributes(request.MessageAttributes),
      });
      return {
        MessageId: sent.messageId,
        MD5OfMessageBody: sent.md5OfBody,
        ...(sent.md5OfMessageAttributes === undefined
          ? {}
          : { MD5OfMessageAttributes: sent.md5OfMessageAttributes }),
      };
    },
    SendMessageBatch(input) {
      const request = parseInput(sendMessageBatchSchema, input);
      const queue = findQueue(request.QueueUrl);
      validateBatchEntries(request.Entries.map((entry) => entry.Id));
      const successful: unknown[] = [];
      const failed: unknown[] = [];
      for (const entry of request.Entries) {
        try {
          const sent = queue.sendMessage(entry.MessageBody, {
            delaySeconds: entry.DelaySeconds,
            messageAttributes: fromWireAttributes(entry.MessageAttributes),
          });
          successful.push({
            Id: entry.Id,
            MessageId: sent.messageId,
            MD5OfMessageBody: sent.md5OfBody,
            ...(sent.md5OfMessageAttributes === undefined
              ? {}
              : { MD5OfMessageAttributes: sent.md5OfMessageAttributes }),
          });
        } catch (error) {
          if (!(error instanceof SqsError)) throw error;
          failed.push({ Id: entry.Id, SenderFault: true, Code: error.code, Message: error.message });
        }
      }
      return { Successful: successful, Failed: failed };
    },
    GetQueueUrl(input) {
      const request = parseInput(getQueueUrlSchema, input);
      return { QueueUrl: queueUrl(findQueue(request.QueueName).name) };
    },
  };

  const server = createServer((request, response) => {
    void handleSqsRequest(request, response, operations);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    queueUrl,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function handleSqsRequest(
  request: IncomingMessage,
  response: ServerResponse,
  operations: Record<string, (input: unknown) => unknown>,
): Promise<void> {
  const requestId = randomUUID();
  const reply = (status: number, body: unknown, queryError?: string) => {
    response.writeHead(status, {
      'content-type': 'application/x-amz-json-1.0',
      'x-amzn-requestid': requestId,
      ...(queryError === undefined ? {} : { 'x-amzn-query-error': queryError }),
    });
    response.end(JSON.stringify(body));
  };
  const fail = (error: SqsError) => {
    reply(
      400,
      { __type: `com.amazonaws.sqs#${error.code}`, message: error.message },
      `${queryErrorCode(error.code)};Sender`,
    );
  };
  try {
    const text = await readBody(request, MAX_REQUEST_BYTES);
    const target = request.headers['x-amz-target'];
    const operationName =
      typeof target === 'string' && target.startsWith('AmazonSQS.') ? target.slice(10) : '';
    const operation = request.method === 'POST' ? operations[operationName] : undefined;
    if (operation === undefined) {
      throw new SqsError(
        'UnsupportedOperation',
        `The local SQS endpoint supports POST with X-Amz-Target AmazonSQS.${Object.keys(operations).join(', AmazonSQS.')}; got ${request.method} ${String(target)}.`,
      );
    }
    let input: unknown;
    try {
      input = JSON.parse(text.length === 0 ? '{}' : text);
    } catch {
      reply(400, {
        __type: 'com.amazon.coral.service#SerializationException',
        message: 'The body is not JSON.',
      });
      return;
    }
    reply(200, operation(input));
  } catch (error) {
    if (error instanceof SqsError) fail(error);
    else reply(500, { __type: 'com.amazonaws.sqs#InternalError', message: 'Internal error.' });
  }
}

/** The legacy Query error codes the SDK reads from `x-amzn-query-error` for a few errors. */
function queryErrorCode(code: string): string {
  if (code === 'QueueDoesNotExist') return 'AWS.SimpleQueueService.NonExistentQueue';
  if (code === 'UnsupportedOperation') return 'AWS.SimpleQueueService.UnsupportedOperation';
  if (code === 'TooManyEntriesInBatchRequest') return 'AWS.SimpleQueueService.TooManyEntriesInBatchRequest';
  if (code === 'BatchEntryIdsNotDistinct') return 'AWS.SimpleQueueService.BatchEntryIdsNotDistinct';
  if (code === 'EmptyBatchRequest') return 'AWS.SimpleQueueService.EmptyBatchRequest';
  if (code === 'InvalidBatchEntryId') return 'AWS.SimpleQueueService.InvalidBatchEntryId';
  return code;
}

function parseInput<T>(schema: z.ZodType<T>, input: unknown): T {
  const parsed = schema.safeParse(input);
  if (!parsed.success) {
    const fields = parsed.error.issues.map((issue) => issue.path.join('.') || '(body)').join(', ');
    throw new SqsError('InvalidParameterValue', `Invalid or missing parameters: ${fields}.`);
  }
  return parsed.data;
}

function validateBatchEntries(ids: string[]): void {
  if (ids.length === 0)
    throw new SqsError('EmptyBatchRequest', 'There should be at least one entry in the request.');
  if (ids.length > MAX_BATCH_ENTRIES) {
    throw new SqsError(
      'TooManyEntriesInBatchRequest',
      `Maximum number of entries per request are ${MAX_BATCH_ENTRIES}.`,
    );
  }
  for (const id of ids) {
    if (!/^[A-Za-z0-9_-]{1,80}$/.test(id)) {
      throw new SqsError(
        'InvalidBatchEntryId',
        `A batch entry id can only contain alphanumeric characters, hyphens and underscores: ${id}`,
      );
    }
  }
  if (new Set(ids).size !== ids.length) {
    throw new SqsError(
      'BatchEntryIdsNotDistinct',
      'Two or more batch entries in the request have the same Id.',
    );
  }
}

function fromWireAttributes(attributes: WireAttributes): Record<string, MessageAttributeValue> {
  const result: Record<string, MessageAttributeValue> = {};
  for (const [name, value] of Object.entries(attributes ?? {})) {
    result[name] = {
      DataType: value.DataType,
      ...(value.StringValue === undefined ? {} : { StringValue: value.StringValue }),
      // The JSON protocol carries blobs as base64.
      ...(value.BinaryValue === undefined ? {} : { BinaryValue: Buffer.from(value.BinaryValue, 'base64') }),
    };
  }
  return result;
}

function readBody(request: IncomingMessage, maxBytes: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) tooLarge = true;
      else chunks.push(chunk);
    });
    request.on('end', () => {
      if (tooLarge) reject(new SqsError('BatchRequestTooLong', 'The request is too large.'));
      else resolve(Buffer.concat(chunks).toString('utf8'));
    });
    request.on('error', reject);
  });
}
