import { describe, expect, it } from 'vitest';
import { startSchedule } from '../../../local/scheduler.ts';

describe('a local rate schedule', () => {
  it('stops only once every invocation under way has ended, also those slower than the period', async () => {
    let started = 0;
    let ended = 0;
    const releases: Array<() => void> = [];
    const schedule = startSchedule({
      everyMs: 5,
      ruleName: 'sweep',
      region: 'us-east-1',
      accountId: '000000000000',
      invoke: () => {
        started += 1;
        return new Promise<void>((resolve) => {
          releases.push(() => {
            ended += 1;
            resolve();
          });
        });
      },
      log: () => {},
    });
    while (started < 3) await new Promise((resolve) => setTimeout(resolve, 5));
    let stopped = false;
    const stopping = schedule.stop().then(() => {
      stopped = true;
    });
    // The newest invocation ends first; an older one, slower than the period, is still under way.
    releases.at(-1)?.();
    for (const release of releases.slice(1, -1)) release();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(stopped).toBe(false);
    releases[0]?.();
    await stopping;
    expect(ended).toBe(started);
    const fired = started;
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(started).toBe(fired);
  });

  it('logs a failed invocation once with its rule name and keeps firing', async () => {
    const lines: string[] = [];
    let calls = 0;
    const schedule = startSchedule({
      everyMs: 5,
      ruleName: 'sweep-stuck-runs',
      region: 'us-east-1',
      accountId: '000000000000',
      invoke: async () => {
        calls += 1;
        if (calls === 1) throw new Error('connect ECONNREFUSED');
      },
      log: (line) => lines.push(line),
    });
    while (calls < 2) await new Promise((resolve) => setTimeout(resolve, 5));
    await schedule.stop();
    expect(lines).toEqual(['[schedule sweep-stuck-runs] Error: connect ECONNREFUSED']);
  });
});
