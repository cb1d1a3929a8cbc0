/** What the local gateway and the local queue share when they invoke a handler the way Lambda does. */

/** An invocation that ran past its function's timeout. */
export class InvocationTimeoutError extends Error {
  constructor(timeoutMs: number) {
    // Lambda's own wording, so local logs read like CloudWatch's.
    super(`Task timed out after ${timeoutMs / 1000} seconds`);
    this.name = 'InvocationTimeoutError';
  }
}

/** The handler's result, or an InvocationTimeoutError once `timeoutMs` has passed. */
export async function withTimeout<T>(promise: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new InvocationTimeoutError(timeoutMs)), timeoutMs);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** An error for the local stack's own log (stack traces never reach a response). */
export function describeError(error: unknown): string {
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}
