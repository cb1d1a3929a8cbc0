import { describe, expect, it } from 'vitest';
import { applyMergePatch, InvalidMergePatchError } from '../../../lambdas/synthesis/merge-patch.ts';

describe('applyMergePatch', () => {
  it('sets new keys and overwrites existing ones', () => {
    const settings = { model: 'small', temperature: 0.7 };

    const result = applyMergePatch(settings, { temperature: 0, maxTokens: 2048 });

    expect(result).toEqual({ model: 'small', temperature: 0, maxTokens: 2048 });
  });

  it('deletes a key whose patch value is null and ignores null for a key that is absent', () => {
    const settings = { model: 'small', topP: 0.9 };

    const result = applyMergePatch(settings, { topP: null, stop: null });

    expect(result).toEqual({ model: 'small' });
    expect(Object.hasOwn(result, 'stop')).toBe(false);
  });

  it('merges nested objects key by key, deleting nested nulls', () => {
    const settings = { retry: { attempts: 2, backoffMs: 100, jitter: true } };

    const result = applyMergePatch(settings, { retry: { attempts: 4, jitter: null } });

    expect(result).toEqual({ retry: { attempts: 4, backoffMs: 100 } });
  });

  it('replaces arrays whole instead of merging them', () => {
    const settings = { stop: ['\n\n', 'END'], tools: [{ name: 'search', enabled: true }] };

    const result = applyMergePatch(settings, { stop: ['###'], tools: [{ name: 'search' }] });

    expect(result).toEqual({ stop: ['###'], tools: [{ name: 'search' }] });
  });

  it.each([
    [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
    [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
    [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
    [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
    [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
    [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
    [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ])('follows the RFC 7396 example: %j patched with %j gives %j', (target, patch, expected) => {
    const result = applyMergePatch(target, patch);

    expect(result).toEqual(expected);
  });

  it('changes neither the settings nor the patch, and shares no arrays with them', () => {
    const settings = { nested: { keep: 1, drop: 2 }, list: [1, 2] };
    const patch = { nested: { drop: null, add: 3 }, list: [9] };
    const settingsBefore = structuredClone(settings);
    const patchBefore = structuredClone(patch);

    const result = applyMergePatch(settings, patch);
    (result.list as number[]).push(10);

    expect(settings).toEqual(settingsBefore);
    expect(patch).toEqual(patchBefore);
    expect(result).toEqual({ nested: { keep: 1, add: 3 }, list: [9, 10] });
  });

  it('refuses a patch with a reserved key rather than applying half of it', () => {
    const patch = JSON.parse('{"temperature": 0, "nested": {"__proto__": {"polluted": true}}}') as Record<
      string,
      unknown
    >;

    const apply = () => applyMergePatch({ temperature: 1 }, patch);

    expect(apply).toThrow(InvalidMergePatchError);
    expect(apply).toThrow('nested.__proto__');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
