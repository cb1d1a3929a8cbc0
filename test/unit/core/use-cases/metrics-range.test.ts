import { describe, expect, it } from 'vitest';
import { metricsRange } from '../../../../lambdas/core/use-cases/metrics.ts';

const MINUTE = 60_000;
const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();

describe('the metrics range', () => {
  it('answers the last 24 hours by the minute asked at any second in 1,440 buckets, ending with the current one', () => {
    const now = Date.parse('2026-12-03T14:25:00.350Z');
    const range = metricsRange({ from: iso(now - DAY), step: 'minute' }, now, 90);
    expect((range.to - range.from) / MINUTE).toBe(1440);
    expect(iso(range.to)).toBe('2026-12-03T14:26:00.000Z');
    expect(iso(range.from)).toBe('2026-12-02T14:26:00.000Z');
  });

  it('rounds out a range to whole buckets, and refuses one longer than 1,440 steps naming the limit', () => {
    const now = Date.parse('2026-12-03T14:25:00.000Z');
    expect(metricsRange({}, now, 90)).toEqual({
      step: 'hour',
      from: Date.parse('2026-12-02T14:00:00.000Z'),
      to: Date.parse('2026-12-03T15:00:00.000Z'),
    });
    expect(() => metricsRange({ from: iso(now - DAY - MINUTE), step: 'minute' }, now, 90)).toThrow(
      /at most 1440/,
    );
  });
});
