/**
 * The runtime of one local execution environment (a worker thread or a child process, like a
 * Lambda sandbox): loads the function's bundle once, then runs the invocations its parent sends,
 * one at a time, in the same module instance (warm reuse). Messages travel as JSON, as events and
 * results cross the Lambda boundary: over the worker's port, or over the child's IPC channel.
 */
import { randomBytes } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { type MessagePort, parentPort } from 'node:worker_threads';
import type { Context } from 'aws-lambda';
import {
  decodeMessage,
  encodeMessage,
  type HostChannel,
  type HostMessage,
  type InvokeMessage,
  type RuntimeMessage,
} from './protocol.ts';

/** A worker thread's port, carrying the messages as JSON text. */
function workerChannel(port: MessagePort): HostChannel {
  return {
    send: async (message) => port.postMessage(encodeMessage(message)),
    onMessage: (listener) =>
      port.on('message', (text: unknown) => {
        const message = decodeMessage<RuntimeMessage>(text);
        if (message) listener(message);
      }),
  };
}

/** A child process's IPC channel (Node serializes the messages as JSON). */
function processChannel(): HostChannel {
  return {
    send: (message: HostMessage) =>
      new Promise<void>((resolve) => {
        if (process.send) process.send(message, undefined, {}, () => resolve());
        else resolve();
      }),
    onMessage: (listener) => process.on('message', listener),
  };
}

const channel = parentPort ? workerChannel(parentPort) : processChannel();
const send = (message: HostMessage) => channel.send(message);

function errorReport(error: unknown) {
  return error instanceof Error
    ? { errorType: error.name, errorMessage: error.message, trace: (error.stack ?? '').split('\n') }
    : { errorType: 'Error', errorMessage: String(error), trace: [] };
}

function createContext(message: InvokeMessage): Context {
  const unsupported = (name: string) => (): never => {
    throw new Error(`context.${name}() is not supported by the local stack; return or throw instead.`);
  };
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: message.functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${message.region}:${message.accountId}:function:${message.functionName}`,
    memoryLimitInMB: String(message.memoryMb),
    awsRequestId: message.awsRequestId,
    logGroupName: `/aws/lambda/${message.functionName}`,
    // One stream per environment, as on Lambda (lambda-function.ts sets it).
    logStreamName: process.env.AWS_LAMBDA_LOG_STREAM_NAME ?? `[$LATEST]${randomBytes(16).toString('hex')}`,
    getRemainingTimeInMillis: () => Math.max(0, message.deadline - Date.now()),
    done: unsupported('done'),
    fail: unsupported('fail'),
    succeed: unsupported('succeed'),
  };
}

const bundle = process.argv[2] ?? '';
const started = performance.now();
let handler: (event: unknown, context: Context) => unknown;
try {
  const module = (await import(pathToFileURL(bundle).href)) as { handler?: unknown };
  if (typeof module.handler !== 'function')
    throw Object.assign(new Error(`${bundle} exports no function named handler`), {
      name: 'Runtime.HandlerNotFound',
    });
  handler = module.handler as typeof handler;
} catch (error) {
  const report = errorReport(error);
  if (!report.errorType.startsWith('Runtime.')) report.errorType = 'Runtime.ImportModuleError';
  await send({ type: 'init-error', error: report });
  process.exit(1);
}
channel.onMessage((message) => {
  // The environment's end, as Lambda's shutdown phase: exit cleanly (profilers and logs flush).
  if (message?.type === 'shutdown') process.exit(0);
  if (message?.type !== 'invoke') return;
  Promise.resolve()
    .then(() => handler(message.event, createContext(message)))
    .then(
      (result) => send({ type: 'result', id: message.id, result: result === undefined ? null : result }),
      (error: unknown) => send({ type: 'error', id: message.id, error: errorReport(error) }),
    );
});
await send({ type: 'ready', initMs: performance.now() - started });
