import { describe, expect, it } from 'vitest';
import { isStorableNumber, storable } from '../../lambdas/core/schemas/storable.ts';

describe('storable', () => {
  it('turns computed numbers DynamoDB refuses into the nearest it stores, deep in objects and arrays', () => {
    const effect = {
      pValue: 1e-200,
      ci95: [-1e-150, 0.25],
      nested: { huge: 1e130, minus: -1e200, fine: 0.05 },
    };
    const kept = storable(effect);
    expect(kept).toEqual({
      pValue: 0,
      ci95: [0, 0.25],
      nested: { huge: 9.99999e125, minus: -9.99999e125, fine: 0.05 },
    });
    const numbers =
      JSON.stringify(kept)
        .match(/-?\d[\d.e+-]*/g)
        ?.map(Number) ?? [];
    expect(numbers.every(isStorableNumber)).toBe(true);
    expect(storable('text')).toBe('text');
    expect(storable(null)).toBeNull();
  });
});
