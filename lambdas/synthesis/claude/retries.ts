/**
 * Which failures of the model API (Anthropic's or Bedrock's, both through the Anthropic SDK)
 * claude-v1 retries, how long it waits before a retry, and the time budget that every request,
 * retry and wait of one run shares.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import Anthropic from '@anthropic-ai/sdk';

export type Cause =
  | 'rate_limited'
  | 'overloaded'
  | 'server_error'
  | 'timeout'
  | 'connection'
  | 'throttled'
  | 'unavailable'
  | 'model_not_ready';

export const CAUSE_TEXT: Record<Cause, (status: number | undefined) => string> = {
  rate_limited: () => 'was rate limited (HTTP 429)',
  overloaded: () => 'was overloaded (HTTP 529)',
  server_error: (status) => `failed with a server error (HTTP ${status ?? 500})`,
  timeout: () => 'timed out',
  connection: () => 'could not be reached',
  // Amazon Bedrock's names (bedrock-faults.ts).
  throttled: () => 'was throttled (ThrottlingException, HTTP 429)',
  unavailable: (status) => `was unavailable (ServiceUnavailableException, HTTP ${status ?? 503})`,
  model_not_ready: (status) =>
    `answered that the model is not ready (ModelNotReadyException, HTTP ${status ?? 429})`,
};

export interface Attempted {
  cause: Cause;
  status: number | undefined;
}

/** The cause of a failure worth retrying, or undefined when retrying cannot help. */
export function retryableCause(error: unknown): Attempted | undefined {
  if (error instanceof Anthropic.APIConnectionTimeoutError) return { cause: 'timeout', status: undefined };
  if (error instanceof Anthropic.APIUserAbortError) return undefined;
  if (error instanceof Anthropic.APIConnectionError) return { cause: 'connection', status: undefined };
  if (!(error instanceof Anthropic.APIError) || error.status === undefined) return undefined;
  const status = error.status;
  const hint = error.headers?.get('x-should-retry');
  if (hint === 'false') return undefined;
  if (status === 429) return { cause: 'rate_limited', status };
  if (status === 529) return { cause: 'overloaded', status };
  if (status === 408) return { cause: 'timeout', status };
  if (status >= 500 || status === 409 || hint === 'true') return { cause: 'server_error', status };
  return undefined;
}

/** The wait the API asked for, from retry-after-ms or retry-after (seconds or an HTTP date). */
export function requestedWaitMs(error: unknown): number | undefined {
  if (!(error instanceof Anthropic.APIError) || error.headers === undefined) return undefined;
  const ms = Number.parseFloat(error.headers.get('retry-after-ms') ?? '');
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const header = error.headers.get('retry-after');
  if (header === null) return undefined;
  const seconds = Number.parseFloat(header);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

export interface Backoff {
  initialMs: number;
  maxMs: number;
}

/** The wait before retry number `retry + 1` when the API names none: doubling up to a cap, with jitter. */
export function backoffMs(backoff: Backoff, retry: number): number {
  return Math.min(backoff.maxMs, backoff.initialMs * 2 ** retry) * (1 - Math.random() * 0.25);
}

/** A run's time budget: an AbortSignal that fires when it is spent, and the time left. */
export class Deadline {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  private readonly endsAt: number;

  private constructor(budgetMs: number) {
    this.endsAt = Date.now() + budgetMs;
    this.timer = setTimeout(() => this.controller.abort(), budgetMs);
  }

  /** Runs `work` within a budget of `budgetMs`; the budget's timer is freed as soon as it settles. */
  static async within<T>(budgetMs: number, work: (deadline: Deadline) => Promise<T>): Promise<T> {
    const deadline = new Deadline(budgetMs);
    try {
      return await work(deadline);
    } finally {
      clearTimeout(deadline.timer);
    }
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  remainingMs(): number {
    return Math.max(0, this.endsAt - Date.now());
  }

  /** Waits `ms`, or less if the budget runs out first: true when the whole wait passed. */
  async wait(ms: number): Promise<boolean> {
    try {
      await sleep(ms, undefined, { signal: this.signal });
      return true;
    } catch {
      return false;
    }
  }
}
