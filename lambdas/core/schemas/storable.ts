/**
 * What every JSON request body must be before any schema sees it: storable in DynamoDB and safe
 * in JavaScript. Checked once, in parseBody, for every endpoint, and on every record
 * built from an OTLP trace (core/otlp/check.ts).
 */
import { ValidationError } from '../errors.ts';
import { LIMITS } from './common.ts';

const JSON_LIMITS = {
  /**
   * Nesting of the body. DynamoDB allows 32 levels in an item, and the deepest item that stores
   * client JSON (a run's proposed patch of a slot's settings) wraps it in 4 more levels.
   */
  maxDepth: 24,
  /** DynamoDB numbers: magnitudes from 1e-130 to below 1e126 (and 0). */
  maxMagnitude: 1e126,
  minMagnitude: 1e-130,
} as const;

/**
 * The rules above in words, as the OpenAPI document states them for every JSON request body. A
 * function, not a constant: this module is in every function, and the first toLocaleString of a
 * process loads ICU's number formats (about 10 ms of every cold start, measured by the bundles bench).
 */
export const jsonBodyRules = () =>
  `Every JSON request body: at most ${LIMITS.bodyBytes.toLocaleString('en-US')} bytes (413 beyond), nested at most ${JSON_LIMITS.maxDepth} levels; ` +
  'numbers finite, with a magnitude from 1e-130 to below 1e126 (what DynamoDB stores) or 0; strings and keys ' +
  'without a NUL character or an unpaired UTF-16 surrogate; no empty key ("") and no "__proto__" key, at any depth. ' +
  'A body that breaks one is a 400 naming where, and nothing of it is stored.';

// A UTF-16 surrogate without its partner is not Unicode text (DynamoDB stores UTF-8).
const UNPAIRED_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
/** Whether a text holds a NUL or an unpaired surrogate (not storable as a key or a value here). */
export const isInvalidText = (text: string) => text.includes('\0') || UNPAIRED_SURROGATE.test(text);

/**
 * A computed value (a p-value, a bound) as DynamoDB can store it: a magnitude under 1e-130 becomes
 * 0 (a p-value of 1e-200 is 0 for every reader), one past the range the largest storable of its
 * sign; arrays and objects are copied with their numbers so; anything else is left as it is.
 */
export function storable<T>(value: T): T {
  if (typeof value === 'number') {
    if (isStorableNumber(value) || !Number.isFinite(value)) return value;
    const largest = 9.99999e125;
    return (Math.abs(value) < JSON_LIMITS.minMagnitude ? 0 : Math.sign(value) * largest) as T;
  }
  if (Array.isArray(value)) return value.map(storable) as T;
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, storable(inner)])) as T;
  }
  return value;
}

/** Whether DynamoDB stores the number as it is (finite, magnitude 0 or from 1e-130 to below 1e126). */
export function isStorableNumber(value: number): boolean {
  const magnitude = Math.abs(value);
  return (
    Number.isFinite(value) &&
    magnitude < JSON_LIMITS.maxMagnitude &&
    (magnitude === 0 || magnitude >= JSON_LIMITS.minMagnitude)
  );
}

/** Throws a ValidationError naming the first place where `value` is not storable, safe JSON. */
export function assertStorableJson(value: unknown): void {
  const visit = (node: unknown, path: string, depth: number): void => {
    if (typeof node === 'number') {
      if (!isStorableNumber(node)) {
        throw new ValidationError(
          `${path || 'The body'} holds a number that cannot be stored: numbers must be finite, with a magnitude from 1e-130 to below 1e126.`,
        );
      }
      return;
    }
    if (typeof node === 'string') {
      if (isInvalidText(node))
        throw new ValidationError(`${path || 'The body'} holds a NUL character or an unpaired surrogate.`);
      return;
    }
    if (node === null || typeof node !== 'object') return;
    if (depth > JSON_LIMITS.maxDepth)
      throw new ValidationError(
        `The body is nested deeper than ${JSON_LIMITS.maxDepth} levels (at ${path}).`,
      );
    if (Array.isArray(node)) {
      for (const [index, item] of node.entries()) visit(item, `${path}[${index}]`, depth + 1);
      return;
    }
    for (const key of Object.keys(node)) {
      // DynamoDB refuses an empty attribute name, in a map at any depth as at the top.
      if (key === '')
        throw new ValidationError(
          `${path || 'The body'} has an empty key (""), which cannot be stored: give every key a name.`,
        );
      if (key === '__proto__')
        throw new ValidationError(`${path || 'The body'} has a key "__proto__", which is not accepted.`);
      if (isInvalidText(key))
        throw new ValidationError(
          `${path || 'The body'} has a key with a NUL character or an unpaired surrogate.`,
        );
      visit((node as Record<string, unknown>)[key], path ? `${path}.${key}` : key, depth + 1);
    }
  };
  visit(value, '', 1);
}
