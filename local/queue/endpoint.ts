/**
 * A small HTTP endpoint speaking the SQS AWS JSON 1.0 protocol for the local queues, with the
 * operations the functions call through their unchanged SQSClient: SendMessage (the synthesize
 * function) and ChangeMessageVisibility (the worker's backoff).
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { MessageAttributeValue } from '@aws-sdk/client-sqs';
import { z } from 'zod';
import { type LocalQueue, MAX_MESSAGE_BYTES, SqsError } from './queue.ts';

export interface SqsEndpointOptions {
  /** 0 or absent: a free port. */
  port?: number;
}

export interface SqsEndpoint {
  endpoint: string;
  queueUrl(name: string): string;
  stop(): Promise<void>;
}

/** The largest request we read: a maximum message plus JSON overhead. */
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
  /** On a standard queue: the fair-queue tenant (the queue checks its characters). */
  MessageGroupId: z.string().optional(),
  MessageAttributes: wireAttributesSchema,
});
const changeMessageVisibilitySchema = z.object({
  QueueUrl: z.string(),
  ReceiptHandle: z.string(),
  VisibilityTimeout: z.number(),
});

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
        messageGroupId: request.MessageGroupId,
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
    ChangeMessageVisibility(input) {
      const request = parseInput(changeMessageVisibilitySchema, input);
      findQueue(request.QueueUrl).changeVisibility(request.ReceiptHandle, request.VisibilityTimeout);
      return {};
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
      if (tooLarge) reject(new SqsError('InvalidParameterValue', 'The request is too large.'));
      else resolve(Buffer.concat(chunks).toString('utf8'));
    });
    request.on('error', reject);
  });
}
