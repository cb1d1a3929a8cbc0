import { describe, expect, it } from 'vitest';
import type { SynthesisRun } from '../../../cli/client.ts';
import { ApiFailure } from '../../../cli/failures.ts';
import { FIRST_DELAY_MS, MAX_DELAY_MS, startSpinner, type WaitDeps, waitForRun } from '../../../cli/wait.ts';

const run = (status: SynthesisRun['status']) => ({ id: 'r1', status }) as SynthesisRun;

/** A clock that sleeping advances, and a script of what each poll answers. */
function harness(answers: Array<SynthesisRun | Error>, timeoutMs = 60_000) {
  let now = 0;
  const sleeps: number[] = [];
  const controller = new AbortController();
  const deps: WaitDeps = {
    now: () => now,
    sleep: async (ms) => {
      sleeps.push(ms);
      now += ms;
    },
    getRun: async () => {
      const next = answers.shift();
      if (!next) throw new Error('polled more often than scripted');
      if (next instanceof Error) throw next;
      return next;
    },
    signal: controller.signal,
    timeoutMs,
  };
  return { deps, sleeps, controller };
}

describe('synthesize --wait', () => {
  it('polls with a growing backoff until the run is generated', async () => {
    const { deps, sleeps } = harness([
      run('pending'),
      run('generating'),
      run('generating'),
      run('generating'),
      run('generated'),
    ]);
    const outcome = await waitForRun(run('pending'), deps);
    expect(outcome.kind).toBe('finished');
    expect(sleeps[0]).toBe(FIRST_DELAY_MS);
    for (let i = 1; i < sleeps.length; i++) expect(sleeps[i]).toBeGreaterThan(sleeps[i - 1] as number);
  });

  it('never waits longer than the cap between polls', async () => {
    const { deps, sleeps } = harness(
      [...Array.from({ length: 20 }, () => run('generating')), run('failed')],
      600_000,
    );
    const outcome = await waitForRun(run('pending'), deps);
    expect(outcome.kind).toBe('failed');
    expect(Math.max(...sleeps)).toBe(MAX_DELAY_MS);
  });

  it('waits at least as long as Retry-After says when the API is busy, then goes on polling', async () => {
    const busy = new ApiFailure(503, 'SERVICE_UNAVAILABLE', 'busy', 7);
    const { deps, sleeps } = harness([busy, run('generated')]);
    const outcome = await waitForRun(run('pending'), deps);
    expect(outcome.kind).toBe('finished');
    expect(sleeps[1]).toBeGreaterThanOrEqual(7_000);
  });

  it('stops at the timeout with the last run it read, sleeping no further than the deadline', async () => {
    const { deps, sleeps } = harness(
      Array.from({ length: 50 }, () => run('generating')),
      3_000,
    );
    const outcome = await waitForRun(run('pending'), deps);
    expect(outcome).toMatchObject({ kind: 'timedOut', run: { status: 'generating' } });
    expect(sleeps.reduce((sum, ms) => sum + ms, 0)).toBe(3_000);
  });

  it('ends when interrupted, without another poll', async () => {
    const { deps, controller } = harness([]);
    controller.abort();
    const outcome = await waitForRun(run('generating'), deps);
    expect(outcome.kind).toBe('interrupted');
  });

  it('gives up on an error that is not "busy"', async () => {
    const { deps } = harness([new ApiFailure(404, 'NOT_FOUND', 'gone', undefined)]);
    await expect(waitForRun(run('pending'), deps)).rejects.toMatchObject({ status: 404 });
  });
});

describe('the progress spinner', () => {
  it('draws the status and elapsed seconds on a terminal, and clears its line at the end', () => {
    const written: string[] = [];
    const spinner = startSpinner({ isTTY: true, write: (text: string) => written.push(text) }, () => 0);
    spinner.update('run r1 generating');
    spinner.stop();
    expect(written[0]).toContain('run r1 generating 0s');
    expect(written.at(-1)).toBe('\r\u001b[2K');
  });

  it('writes nothing when stderr is not a terminal', () => {
    const written: string[] = [];
    const spinner = startSpinner({ isTTY: false, write: (text: string) => written.push(text) });
    spinner.update('run r1 generating');
    spinner.stop();
    expect(written).toEqual([]);
  });
});
