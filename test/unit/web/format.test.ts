import { describe, expect, it } from 'vitest';
import { formatDuration, listWords } from '../../../web/src/format.ts';

describe('format', () => {
  it('writes durations and lists as a reader says them', () => {
    expect([850, 4_200, 185_000, 7_440_000, -1].map(formatDuration)).toEqual([
      '850 ms',
      '4.2 s',
      '3 min 5 s',
      '2 h 4 min',
      '—',
    ]);
    expect([[], ['a'], ['a', 'b'], ['a', 'b', 'c']].map(listWords)).toEqual([
      '',
      'a',
      'a and b',
      'a, b and c',
    ]);
  });
});
