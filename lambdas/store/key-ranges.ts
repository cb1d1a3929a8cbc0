/*
 * Sort-key ranges of a Query. DynamoDB refuses a BETWEEN whose lower bound sorts above its upper
 * one (a ValidationException, so a 500 for the caller): such a range holds no item, so it is no Query.
 */

/** True when no sort key lies between `from` and `to` (DynamoDB orders strings by their UTF-8 bytes). */
export function isEmptyRange(from: string, to: string): boolean {
  return Buffer.compare(Buffer.from(from, 'utf8'), Buffer.from(to, 'utf8')) > 0;
}
