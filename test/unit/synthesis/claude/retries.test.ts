/** The time budget of a claude-v1 run: waits end when it is spent, and a settled run leaves no timer behind. */
import { describe, expect, it } from 'vitest';
import { Deadline } from '../../../../lambdas/synthesis/claude/retries.ts';

const pendingTimers = () =>
  process.getActiveResourcesInfo().filter((resource) => resource === 'Timeout').length;

describe('Deadline', () => {
  it('lets a wait within the budget run to its end', async () => {
    const waited = await Deadline.within(5_000, (deadline) => deadline.wait(10));

    expect(waited).toBe(true);
  });

  it('cuts a wait short when the budget runs out during it, and says so', async () => {
    const started = Date.now();

    const waited = await Deadline.within(50, (deadline) => deadline.wait(5_000));

    expect(waited).toBe(false);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('frees its timer as soon as the run settles, so a finished script is not held open', async () => {
    const before = pendingTimers();

    await Deadline.within(60_000, async () => 'generated');
    await expect(
      Deadline.within(60_000, async () => {
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');

    expect(pendingTimers()).toBe(before);
  });
});
