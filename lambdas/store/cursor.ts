/*
 * Opaque pagination cursors: a page's LastEvaluatedKey, base64url-encoded, checked on the way back
 * in against the query it continues, so a tampered cursor is a 400 and never reads elsewhere.
 */
import * as z from 'zod/mini';
import { ValidationError } from '../core/errors.ts';

/**
 * Opaque pagination cursors: the DynamoDB LastEvaluatedKey, base64url-encoded. On the way back in
 * the key is checked against the query it continues (same partition, only the expected string
 * attributes), so a tampered cursor is a 400 and can never read another partition.
 */
export function encodeCursor(key: Record<string, unknown> | undefined): string | null {
  return key ? Buffer.from(JSON.stringify(key), 'utf8').toString('base64url') : null;
}

export function decodeCursor(
  cursor: string | undefined,
  expected: { attributes: readonly string[]; partition: { name: string; value: string } },
): Record<string, string> | undefined {
  if (cursor === undefined) return undefined;
  const invalid = () => new ValidationError('The cursor is invalid; use nextCursor from a previous page.');
  if (cursor.length > 2048 || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw invalid();
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  const shape = z.strictObject(
    Object.fromEntries(expected.attributes.map((name) => [name, z.string().check(z.maxLength(512))])),
  );
  const parsed = shape.safeParse(decoded);
  if (!parsed.success) throw invalid();
  const key = parsed.data as Record<string, string>;
  if (key[expected.partition.name] !== expected.partition.value) throw invalid();
  return key;
}
