import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Resolves once `condition` holds. The deadline is a safety net against a hanging test, not an
 * assertion about speed.
 */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  what: string,
  deadlineMs = 10_000,
  intervalMs = 5,
): Promise<void> {
  if (!(await holdsWithin(condition, deadlineMs, intervalMs))) throw new Error(`Gave up waiting for ${what}`);
}

/** Whether `condition` comes to hold within `deadlineMs` (false once it has not). */
export async function holdsWithin(
  condition: () => boolean | Promise<boolean>,
  deadlineMs: number,
  intervalMs = 5,
): Promise<boolean> {
  const deadline = Date.now() + deadlineMs;
  while (!(await condition())) {
    if (Date.now() > deadline) return false;
    await sleep(intervalMs);
  }
  return true;
}

/** A promise with its resolve function, for handlers a test wants to hold open. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve: (value: T) => void = () => {};
  const promise = new Promise<T>((settle) => {
    resolve = settle;
  });
  return { promise, resolve };
}
