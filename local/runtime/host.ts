/**
 * The runtime of one local execution environment (a worker thread or a child process, like a
 * Lambda sandbox): loads the function's bundle once, then runs the invocations its parent sends,
 * one at a time, in the same module instance (warm reuse). Messages travel by structured clone
 * (protocol.ts); the result is first put through acrossJson(), so the caller receives what
 * JSON.stringify makes of it, as from Lambda.
 */
import { randomBytes } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { type MessagePort, parentPort } from 'node:worker_threads';
import type { Context } from 'aws-lambda';
import { acrossJson } from './json-plain.ts';
import {
  type HostChannel,
  type HostMessage,
  type InvokeMessage,
  messagesTo,
  type RuntimeMessage,
} from './protocol.ts';

/** A worker thread's port. */
function workerChannel(port: MessagePort): HostChannel {
  return {
    send: async (message) => port.postMessage(message),
    onMessage: (listener) => port.on('message', messagesTo<RuntimeMessage>(listener)),
  };
}

/** A child process's IPC channel (advanced serialization: structured clone, as a worker's port). */
function processChannel(): HostChannel {
  return {
    send: (message: HostMessage) =>
      new Promise<void>((resolve) => {
        if (process.send) process.send(message, undefined, {}, () => resolve());
        else resolve();
      }),
    onMessage: (listener) => process.on('message', messagesTo<RuntimeMessage>(listener)),
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
/** CPU time this environment has used: its own thread's in a worker (Node 24), its process's otherwise. */
function cpuMicros(): number {
  const { threadCpuUsage } = process as NodeJS.Process & { threadCpuUsage?: () => NodeJS.CpuUsage };
  const usage = parentPort && threadCpuUsage ? threadCpuUsage.call(process) : process.cpuUsage();
  return usage.user + usage.system;
}

channel.onMessage((message) => {
  // The environment's end, as Lambda's shutdown phase: exit cleanly (profilers and logs flush).
  if (message.type === 'shutdown') process.exit(0);
  if (message.type === 'usage') {
    void send({ type: 'usage', id: message.id, cpuMicros: cpuMicros() });
    return;
  }
  if (message.type !== 'invoke') return;
  Promise.resolve()
    .then(() => handler(message.event, createContext(message)))
    // A result JSON cannot write (a cycle, a BigInt) fails the invocation, not the environment.
    .then((result) => ({ type: 'result' as const, id: message.id, result: acrossJson(result) }))
    .catch((error: unknown) => ({ type: 'error' as const, id: message.id, error: errorReport(error) }))
    .then(send);
});
await send({ type: 'ready', initMs: performance.now() - started });
