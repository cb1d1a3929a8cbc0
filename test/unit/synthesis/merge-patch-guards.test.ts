/** The reserved-key guard of merge patches: each of __proto__, constructor and prototype is refused at any depth, named by its path. */
import { describe, expect, it } from 'vitest';
import {
  applyMergePatch,
  findForbiddenKey,
  InvalidMergePatchError,
} from '../../../lambdas/synthesis/merge-patch.ts';

/** Patches are parsed from JSON, as a model's tool input is: `__proto__` is then an own key. */
const patchOf = (json: string): Record<string, unknown> => {
  const parsed: unknown = JSON.parse(json);
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new Error('not an object');
  return Object.fromEntries(Object.entries(parsed));
};

describe('applyMergePatch reserved keys', () => {
  it.each(['__proto__', 'constructor', 'prototype'])(
    'refuses %j at the top level, naming it without a path prefix',
    (key) => {
      const patch = patchOf(`{"temperature": 0, "${key}": {"polluted": true}}`);

      const apply = () => applyMergePatch({ temperature: 1 }, patch);

      expect(apply).toThrow(InvalidMergePatchError);
      expect(apply).toThrow(`the patch uses the reserved key "${key}"`);
    },
  );

  it.each(['__proto__', 'constructor', 'prototype'])(
    'refuses %j two levels down, naming its dotted path',
    (key) => {
      const patch = patchOf(`{"retry": {"policy": {"${key}": {"x": 1}}}}`);

      expect(() => applyMergePatch({}, patch)).toThrow(
        `the patch uses the reserved key "retry.policy.${key}"`,
      );
      expect(findForbiddenKey(patch)).toBe(`retry.policy.${key}`);
    },
  );

  it('names the error so that logs say what refused the patch', () => {
    const error = (() => {
      try {
        applyMergePatch({}, patchOf('{"constructor": 1}'));
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();

    expect(error).toBeInstanceOf(InvalidMergePatchError);
    expect(String(error)).toBe('InvalidMergePatchError: the patch uses the reserved key "constructor"');
  });

  it('applies a patch whose array holds an object with a reserved key: arrays replace the setting whole, as data', () => {
    const patch = patchOf('{"tools": [{"name": "search", "constructor": "x"}]}');

    expect(findForbiddenKey(patch)).toBeUndefined();
    expect(applyMergePatch({ tools: [] }, patch)).toEqual({ tools: [{ name: 'search', constructor: 'x' }] });
  });

  it('finds nothing in values that are not objects', () => {
    expect([
      findForbiddenKey(null),
      findForbiddenKey('constructor'),
      findForbiddenKey(['prototype']),
    ]).toEqual([undefined, undefined, undefined]);
  });
});
