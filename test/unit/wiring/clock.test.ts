import { describe, expect, it } from 'vitest';
import { nanoidGenerator, newId } from '../../../lambdas/wiring/clock.ts';

describe('the id generator', () => {
  it('never starts an id with a dash or an underscore, which a command line would read as an option', () => {
    const draws = ['-abcdefghijklmnopqrst', '_abcdefghijklmnopqrst', 'Kabcdefghijklmnopqrst'];
    expect(newId(() => draws.shift() as string)).toBe('Kabcdefghijklmnopqrst');
    for (let i = 0; i < 2000; i++) expect(nanoidGenerator.newId()).toMatch(/^[A-Za-z0-9][A-Za-z0-9_-]{20}$/);
  });
});
