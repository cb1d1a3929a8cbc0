/**
 * The messages between the local function runtime (lambda-function.ts) and each environment's host
 * (host.ts), whichever kind of environment carries them (sandboxes.ts: a worker thread's port or a
 * child process's IPC channel, both by structured clone). What crosses the Lambda boundary is JSON:
 * the event and the result are put through acrossJson() (json-plain.ts) before they are sent, so a
 * handler receives and returns exactly what a JSON round trip gives, as on Lambda.
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

/**
 * What the runtime sends an environment: an invocation, a question about the CPU time it has used
 * (the bench's breakdown), or the end of the environment (Lambda's shutdown phase).
 */
export type RuntimeMessage = InvokeMessage | { type: 'usage'; id: number } | { type: 'shutdown' };

/** What an environment answers. */
export type HostMessage =
  | { type: 'ready'; initMs: number }
  | { type: 'init-error'; error: ErrorReport }
  | { type: 'result'; id: number; result: unknown }
  | { type: 'error'; id: number; error: ErrorReport }
  /** CPU microseconds (user + system) of the environment's own thread or process so far. */
  | { type: 'usage'; id: number; cpuMicros: number };

/** The host's end of its environment's channel. */
export interface HostChannel {
  /** Resolves once the message has left (so the host may exit right after). */
  send(message: HostMessage): Promise<void>;
  onMessage(listener: (message: RuntimeMessage) => void): void;
}

/** Whether a value received on a channel is a message of the protocol (a type field at least). */
function isMessage<T extends RuntimeMessage | HostMessage>(value: unknown): value is T {
  return (
    typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string'
  );
}

/** A channel's 'message' listener that hands `listener` the protocol's messages and drops anything else. */
export function messagesTo<T extends RuntimeMessage | HostMessage>(
  listener: (message: T) => void,
): (data: unknown) => void {
  return (data) => {
    if (isMessage<T>(data)) listener(data);
  };
}
