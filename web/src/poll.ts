/** How the application polls a run: backoff from half a second to five, until a status is final. */
import type { RunStatus } from './types.ts';

export const FIRST_POLL_MS = 500;
export const MAX_POLL_MS = 5_000;

/** The wait before the next poll: 500 ms, then half again each time, at most 5 s. */
export function nextPollDelay(previousMs?: number): number {
  if (previousMs === undefined) return FIRST_POLL_MS;
  return Math.min(MAX_POLL_MS, Math.round(previousMs * 1.5));
}

/** Statuses no worker will move on: polling stops there. */
export function isSettled(status: RunStatus): boolean {
  return status !== 'pending' && status !== 'generating';
}
