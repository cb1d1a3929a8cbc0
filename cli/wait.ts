/**
 * `synthesize --wait`: polls the run until it is decided, with a growing backoff that a
 * Retry-After from the API lengthens, within `--timeout`; Ctrl-C (the abort signal) ends the
 * waiting and nothing else — the run goes on.
 */
import type { SynthesisRun } from './client.ts';
import { ApiFailure } from './failures.ts';

export type WaitOutcome =
  | { kind: 'finished'; run: SynthesisRun }
  | { kind: 'failed'; run: SynthesisRun }
  | { kind: 'timedOut'; run: SynthesisRun }
  | { kind: 'interrupted'; run: SynthesisRun };

export interface WaitDeps {
  getRun(): Promise<SynthesisRun>;
  /** Resolves after `ms`, or early when `signal` aborts. */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
  now(): number;
  signal: AbortSignal;
  timeoutMs: number;
  /** Called with every run read, for the progress line. */
  onPoll?(run: SynthesisRun): void;
}

export const FIRST_DELAY_MS = 500;
export const MAX_DELAY_MS = 5_000;
const GROWTH = 1.5;
/** Answers that say "not now" rather than "no": the poll is tried again after a wait. */
const TRANSIENT_STATUSES = new Set([429, 502, 503, 504]);

const IN_FLIGHT = new Set<SynthesisRun['status']>(['pending', 'generating']);

export async function waitForRun(initial: SynthesisRun, deps: WaitDeps): Promise<WaitOutcome> {
  const started = deps.now();
  let run = initial;
  let delay = FIRST_DELAY_MS;
  while (true) {
    if (run.status === 'failed') return { kind: 'failed', run };
    if (!IN_FLIGHT.has(run.status)) return { kind: 'finished', run };
    if (deps.signal.aborted) return { kind: 'interrupted', run };
    const remaining = deps.timeoutMs - (deps.now() - started);
    if (remaining <= 0) return { kind: 'timedOut', run };

    await deps.sleep(Math.min(delay, remaining), deps.signal);
    if (deps.signal.aborted) return { kind: 'interrupted', run };
    delay = Math.min(delay * GROWTH, MAX_DELAY_MS);
    try {
      run = await deps.getRun();
      deps.onPoll?.(run);
    } catch (error) {
      if (!(error instanceof ApiFailure) || !TRANSIENT_STATUSES.has(error.status)) throw error;
      // The next wait is at least what the API asked for.
      if (error.retryAfterSeconds !== undefined) delay = Math.max(delay, error.retryAfterSeconds * 1000);
    }
  }
}

/** setTimeout as a promise that an AbortSignal cuts short. */
export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

export interface ProgressStream {
  isTTY?: boolean;
  write(text: string): unknown;
}

/** A spinner with a status and the elapsed time on stderr — only when stderr is a terminal. */
export function startSpinner(stream: ProgressStream, now: () => number = Date.now) {
  if (!stream.isTTY) return { update(_text: string) {}, stop() {} };
  const started = now();
  let text = '';
  let frame = 0;
  const draw = () => {
    const seconds = ((now() - started) / 1000).toFixed(0);
    stream.write(`\r\u001b[2K${FRAMES[frame % FRAMES.length]} ${text} ${seconds}s`);
    frame += 1;
  };
  const timer = setInterval(draw, 100);
  timer.unref();
  return {
    update(next: string) {
      text = next;
      draw();
    },
    stop() {
      clearInterval(timer);
      stream.write('\r\u001b[2K');
    },
  };
}
