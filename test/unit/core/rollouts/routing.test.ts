import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { routingPoint, servesCandidate } from '../../../../lambdas/core/rollouts/routing.ts';

describe('routing a key to an arm', () => {
  it('gives the candidate its percent of 10,000 keys within ±3 points, for every percent 1-99', () => {
    const rollout = 'V1StGXR8_Z5jdHi6B-myT';
    const points = Array.from({ length: 10_000 }, (_, i) => routingPoint(rollout, `user-${i}`));
    for (let percent = 1; percent <= 99; percent++) {
      const share = (points.filter((point) => point < percent).length / points.length) * 100;
      expect(Math.abs(share - percent), `percent ${percent}: share ${share}`).toBeLessThanOrEqual(3);
    }
  });

  it('keeps the split within ±3 points for any rollout id and key prefix (property)', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 21 }),
        fc.string({ maxLength: 20 }),
        fc.integer({ min: 1, max: 99 }),
        (rolloutId, prefix, percent) => {
          let candidate = 0;
          for (let i = 0; i < 10_000; i++) {
            if (servesCandidate({ id: rolloutId, percent }, `${prefix}${i}`)) candidate += 1;
          }
          return Math.abs(candidate / 100 - percent) <= 3;
        },
      ),
      { numRuns: 20 },
    );
  });

  it('always gives a key the same arm within a rollout', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 256 }),
        fc.integer({ min: 1, max: 99 }),
        (key, percent) => {
          const arms = Array.from({ length: 3 }, () => servesCandidate({ id: 'r1', percent }, `${key}`));
          return new Set(arms).size === 1;
        },
      ),
    );
  });

  it('keeps the rollout id and the key apart: r1 with key 0x is not r10 with key x', () => {
    const points = ['0x', '0y', '0z', '01', '02'].map((key) => routingPoint('r1', key));
    const shifted = ['x', 'y', 'z', '1', '2'].map((key) => routingPoint('r10', key));
    expect(points).not.toEqual(shifted);
  });

  it('draws at random without a routing key', () => {
    expect(servesCandidate({ id: 'r', percent: 10 }, undefined, () => 0.05)).toBe(true);
    expect(servesCandidate({ id: 'r', percent: 10 }, undefined, () => 0.5)).toBe(false);
  });
});
