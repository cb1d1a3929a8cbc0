/** Byte budgets at their edges: a text exactly at the bound is kept whole, and a bound too small for the marker keeps text, not a marker. */
import { describe, expect, it } from 'vitest';
import {
  BYTES_PER_TOKEN,
  byteLength,
  estimateTokens,
  shorten,
  TRUNCATION_MARKER,
  truncateUtf8,
} from '../../../lambdas/synthesis/text-budget.ts';

describe('byteLength and estimateTokens', () => {
  it('count UTF-8 bytes, and a token for every 3 bytes started', () => {
    expect(byteLength('aé数🔥')).toBe(1 + 2 + 3 + 4);
    expect(BYTES_PER_TOKEN).toBe(3);
    expect([
      estimateTokens(''),
      estimateTokens('abc'),
      estimateTokens('abcd'),
      estimateTokens('数🔥'),
    ]).toEqual([0, 1, 2, 3]);
  });
});

describe('truncateUtf8', () => {
  it('keeps a text that fits exactly, and cuts one byte more at a character boundary', () => {
    expect(truncateUtf8('abc', 3)).toBe('abc');
    expect(truncateUtf8('ab数', 5)).toBe('ab数');
    expect(truncateUtf8('ab数', 4)).toBe('ab');
  });

  it('gives an empty text for a bound of 0 or less', () => {
    expect(truncateUtf8('abc', 0)).toBe('');
    expect(truncateUtf8('abc', -5)).toBe('');
  });
});

describe('shorten', () => {
  const text = 'x'.repeat(1_000);
  const marker = (omitted: number) => `…[truncated ${omitted} bytes]`;

  it('keeps a text of exactly the bound whole, and marks a text one byte over', () => {
    expect(shorten(text, 1_000)).toBe(text);

    const over = shorten(text, 999);

    expect(byteLength(over)).toBeLessThanOrEqual(999);
    expect(over.startsWith(`${'x'.repeat(974)}${TRUNCATION_MARKER}`)).toBe(true);
    expect(over).toBe(`${'x'.repeat(974)}${marker(26)}`);
  });

  it('keeps the longest prefix without a marker when the marker alone would use the whole bound', () => {
    // The marker for 1000 bytes is 25 bytes long: at a bound of 25 there is no room left for text.
    expect(byteLength(marker(1_000))).toBe(25);

    expect(shorten(text, 25)).toBe('x'.repeat(25));
    expect(shorten(text, 10)).toBe('x'.repeat(10));
    expect(shorten(text, 26)).toBe(`x${marker(999)}`);
  });
});
