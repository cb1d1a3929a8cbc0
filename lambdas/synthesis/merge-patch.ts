/* JSON merge patch (RFC 7386) for slot settings, refusing prototype-polluting keys
   (__proto__, constructor, prototype) anywhere in the patch. */
import { apply } from 'json-merge-patch';

/** A JSON object: slot settings and merge patches of them both have this shape. */
export type JsonObject = Record<string, unknown>;

/**
 * Keys on which `json-merge-patch` stops applying the rest of the patch (its prototype-pollution
 * guard). A silently half-applied patch would be worse than a refused one, so we refuse them.
 */
const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/** A patch that cannot be applied safely. */
export class InvalidMergePatchError extends Error {
  override name = 'InvalidMergePatchError';
}

/** The first forbidden key anywhere in `value`, as a dotted path, or undefined when there is none. */
export function findForbiddenKey(value: unknown, path = ''): string | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  if (Array.isArray(value)) return undefined;
  for (const [key, child] of Object.entries(value)) {
    const childPath = path === '' ? key : `${path}.${key}`;
    if (FORBIDDEN_KEYS.has(key)) return childPath;
    const nested = findForbiddenKey(child, childPath);
    if (nested !== undefined) return nested;
  }
  return undefined;
}

/** Why `patch` cannot be applied safely, or undefined when it can. */
export function mergePatchRefusal(patch: JsonObject): string | undefined {
  const forbidden = findForbiddenKey(patch);
  return forbidden === undefined ? undefined : `the patch uses the reserved key "${forbidden}"`;
}

/** Applies an RFC 7396 merge patch to a copy of `target`; neither argument is changed. */
export function applyMergePatch(target: JsonObject, patch: JsonObject): JsonObject {
  const refusal = mergePatchRefusal(patch);
  if (refusal !== undefined) throw new InvalidMergePatchError(refusal);
  // The library edits its target in place and hands out arrays of the patch by reference, so both
  // are cloned: callers keep their base settings and may reuse or inspect the patch afterwards.
  // An object patch always yields an object, which is what the library's typing says too.
  return apply(structuredClone(target), structuredClone(patch));
}
