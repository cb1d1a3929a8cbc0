import { describe, expect, it } from 'vitest';
import { isSettled, nextPollDelay } from '../../../web/src/poll.ts';

describe('polling a run', () => {
  it('backs off from half a second by half again each time, to at most five seconds', () => {
    const delays: number[] = [];
    let delay: number | undefined;
    for (let i = 0; i < 8; i++) {
      delay = nextPollDelay(delay);
      delays.push(delay);
    }

    expect(delays).toEqual([500, 750, 1125, 1688, 2532, 3798, 5000, 5000]);
  });

  it('stops at every status no worker moves on', () => {
    expect(['pending', 'generating'].filter(isSettled as (status: string) => boolean)).toEqual([]);
    for (const status of ['generated', 'failed', 'approved', 'rejected'] as const)
      expect(isSettled(status)).toBe(true);
  });
});
