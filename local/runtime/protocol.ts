/**
 * The messages between the local function runtime (lambda-function.ts) and each environment's host
 * (host.ts), whichever kind of environment carries them (sandboxes.ts: a child process's IPC
 * channel or a worker thread's port). Both carry them as JSON text, as events and results cross
 * the Lambda boundary: what a handler returns reaches the caller as JSON.stringify makes it.
 */

/** Lambda's error shape: what a failed invocation reports. */
export interface ErrorReport {
  errorType: string;
  errorMessage: string;
  trace: string[];
}

export interface InvokeMessage {
  type: 'invoke';
  id: number;
  event: unknown;
  awsRequestId: string;
  functionName: string;
  /** Epoch milliseconds at which the invocation times out. */
  deadline: number;
  memoryMb: number;
  region: string;
  accountId: string;
}

/** What the runtime sends an environment: an invocation, or the end of the environment (Lambda's shutdown phase). */
export type RuntimeMessage = InvokeMessage | { type: 'shutdown' };

/** What an environment answers. */
export type HostMessage =
  | { type: 'ready'; initMs: number }
  | { type: 'init-error'; error: ErrorReport }
  | { type: 'result'; id: number; result: unknown }
  | { type: 'error'; id: number; error: ErrorReport };

/** The host's end of its environment's channel. */
export interface HostChannel {
  /** Resolves once the message has left (so the host may exit right after). */
  send(message: HostMessage): Promise<void>;
  onMessage(listener: (message: RuntimeMessage) => void): void;
}

/** A message as text on a worker's port: the same JSON a child process's IPC channel carries. */
export const encodeMessage = (message: RuntimeMessage | HostMessage): string => JSON.stringify(message);

export function decodeMessage<T extends RuntimeMessage | HostMessage>(text: unknown): T | undefined {
  if (typeof text !== 'string') return undefined;
  return JSON.parse(text) as T;
}
