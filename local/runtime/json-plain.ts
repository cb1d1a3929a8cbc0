/**
 * What crosses the Lambda boundary is JSON: an event arrives as JSON.parse made it, a result leaves
 * as JSON.stringify makes it. The local runtime's channels (a worker's port, a child's IPC channel
 * with advanced serialization) copy values by structured clone instead, which is cheaper (no text
 * to build and parse) and gives the very same value when the value is "JSON-plain": plain objects
 * and arrays of strings, finite numbers, booleans and null, nothing a JSON round trip would drop,
 * change or refuse. Anything else takes the JSON round trip itself.
 */

import { types } from 'node:util';

/** Deeper than any event or result of this stack; a deeper (or cyclic) value takes the JSON path. */
const MAX_DEPTH = 64;

/** Whether structured clone and a JSON round trip give the same value for `value`. */
export function isJsonPlain(value: unknown, depth = 0): boolean {
  if (value === null) return true;
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      // JSON writes NaN and ±Infinity as null, and -0 as 0.
      return Number.isFinite(value) && !Object.is(value, -0);
    case 'object':
      return (
        depth < MAX_DEPTH && (Array.isArray(value) ? plainArray(value, depth) : plainObject(value, depth))
      );
    default:
      // undefined, functions, symbols and bigints: dropped, refused or thrown on by JSON.
      return false;
  }
}

function plainArray(array: unknown[], depth: number): boolean {
  // A Proxy cannot be cloned at all; JSON reads through it.
  if (types.isProxy(array) || Object.getPrototypeOf(array) !== Array.prototype) return false;
  // Holes become null in JSON; other own keys are dropped by JSON and kept by structured clone.
  if (Object.keys(array).length !== array.length) return false;
  for (const item of array) if (!isJsonPlain(item, depth + 1)) return false;
  return true;
}

function plainObject(object: object, depth: number): boolean {
  if (types.isProxy(object)) return false;
  const prototype = Object.getPrototypeOf(object);
  // Class instances, Dates, Maps, typed arrays… each has a JSON form of its own (or none).
  if (prototype !== Object.prototype && prototype !== null) return false;
  if ('toJSON' in object) return false;
  for (const key of Object.keys(object)) {
    const item = (object as Record<string, unknown>)[key];
    // A key whose value is undefined is dropped by JSON and kept by structured clone.
    if (!isJsonPlain(item, depth + 1)) return false;
  }
  return true;
}

/** `value` as it arrives on the other side of the Lambda boundary: what JSON.parse(JSON.stringify()) gives. */
export function acrossJson(value: unknown): unknown {
  if (isJsonPlain(value)) return value;
  const text = JSON.stringify(value);
  return text === undefined ? null : JSON.parse(text);
}
