/**
 * What crosses the local runtime's channels is what a JSON round trip gives, as across Lambda's
 * boundary, though the channels copy by structured clone.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { acrossJson, isJsonPlain } from '../../../local/runtime/json-plain.ts';

const jsonRoundTrip = (value: unknown) => {
  const text = JSON.stringify(value);
  return text === undefined ? null : JSON.parse(text);
};

describe('a value across the Lambda boundary', () => {
  it('is, after structured clone, exactly what JSON.stringify then JSON.parse make of it', () => {
    fc.assert(
      fc.property(
        fc.anything({
          withDate: true,
          withMap: true,
          withSet: true,
          withTypedArray: true,
          withSparseArray: true,
          withNullPrototype: true,
          withBoxedValues: true,
          withObjectString: true,
        }),
        (value) => {
          expect(structuredClone(acrossJson(value))).toStrictEqual(jsonRoundTrip(value));
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it('passes plain JSON data as it is, without writing it out', () => {
    const event = { headers: { Host: 'x' }, list: [1, 'two', null, true], nested: { deep: [{ a: 1.5 }] } };
    expect(isJsonPlain(event)).toBe(true);
    expect(acrossJson(event)).toBe(event);
    expect(isJsonPlain(Object.assign(Object.create(null), { a: 1 }))).toBe(true);
  });

  it('takes the JSON path for everything JSON changes, drops or refuses', () => {
    const toJson = { toJSON: () => 'custom' };
    const withExtraKey = Object.assign([1, 2], { extra: true });
    for (const value of [
      { missing: undefined },
      [undefined],
      new Array(2),
      withExtraKey,
      Number.NaN,
      -0,
      Number.POSITIVE_INFINITY,
      new Date(0),
      new Map([[1, 2]]),
      toJson,
      new Proxy({}, {}),
      () => 1,
      1n,
    ])
      expect(isJsonPlain(value)).toBe(false);

    expect(acrossJson({ when: new Date(0), missing: undefined, nan: Number.NaN, custom: toJson })).toEqual({
      when: '1970-01-01T00:00:00.000Z',
      nan: null,
      custom: 'custom',
    });
    expect(acrossJson(undefined)).toBeNull();
    expect(acrossJson(withExtraKey)).toEqual([1, 2]);
  });

  it('refuses what JSON refuses: a cycle or a BigInt is the handler’s error', () => {
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(() => acrossJson(cycle)).toThrow(TypeError);
    expect(() => acrossJson({ count: 1n })).toThrow(TypeError);
  });
});
