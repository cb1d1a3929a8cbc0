/*
 * Reading items back: every item a store returns is parsed by its schema, never cast. An item that
 * does not match is corrupt: an internal error (logged by the caller's error mapper, a 500 on HTTP).
 */
import type * as z from 'zod/mini';

/**
 * A stored item that does not have the shape its store writes. The message names the item and the
 * attributes that are wrong, never their values (an item may hold a password hash).
 */
export class CorruptItemError extends Error {
  override name = 'CorruptItemError';
}

/** The item as `schema` reads it (unknown attributes, keys among them, dropped); else CorruptItemError. */
export function parseItem<T>(schema: z.ZodMiniType<T>, item: unknown, what: string): T {
  const result = schema.safeParse(item);
  if (result.success) return result.data;
  const problems = result.error.issues
    .map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : 'the item'}: ${issue.message}`)
    .join('; ');
  throw new CorruptItemError(`The stored ${what} is corrupt (${problems}).`);
}

/** A reader of one kind of item, for Array.map and queryPage. */
export function itemReader<T>(schema: z.ZodMiniType<T>, what: string): (item: unknown) => T {
  return (item) => parseItem(schema, item, what);
}
