/** The messages between the local function runtime (lambda-function.ts) and each environment's host (host.ts). */

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

export type HostMessage =
  | { type: 'ready'; initMs: number }
  | { type: 'init-error'; error: ErrorReport }
  | { type: 'result'; id: number; result: unknown }
  | { type: 'error'; id: number; error: ErrorReport };
