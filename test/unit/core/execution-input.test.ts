import { describe, expect, it } from 'vitest';
import { LIMITS } from '../../../lambdas/core/schemas/common.ts';
import {
  executionInputValueSchema,
  recordExecutionsBodySchema,
} from '../../../lambdas/core/schemas/records.ts';

const withInput = (input: unknown) => ({ executions: [{ status: 'succeeded', durationMs: 1, input }] });
/** A JSON string value whose serialization ({"q":"…"}) takes exactly `bytes` bytes. */
const inputOf = (bytes: number) => ({ q: 'x'.repeat(bytes - '{"q":""}'.length) });

describe("an execution's input", () => {
  it('is any JSON up to 16,384 bytes serialized', () => {
    for (const input of [null, 3, 'text', [1, { a: true }], inputOf(LIMITS.inputBytes)]) {
      expect(recordExecutionsBodySchema.safeParse(withInput(input)).success).toBe(true);
    }
  });

  it('is refused one byte over the limit, counting UTF-8 bytes, with a message naming the limit', () => {
    const over = recordExecutionsBodySchema.safeParse(withInput(inputOf(LIMITS.inputBytes + 1)));
    expect(over.success).toBe(false);
    expect(over.error?.issues[0]?.message).toContain('16384 bytes');
    const multiByte = { q: 'é'.repeat(LIMITS.inputBytes / 2) };
    expect(recordExecutionsBodySchema.safeParse(withInput(multiByte)).success).toBe(false);
  });

  it('may not hold an empty key, which DynamoDB cannot store', () => {
    const refused = recordExecutionsBodySchema.safeParse(withInput({ a: { '': 1 } }));
    expect(refused.success).toBe(false);
    expect(refused.error?.issues[0]?.path).toEqual(['executions', 0, 'input', 'a', '']);
    expect(refused.error?.issues[0]?.message).toBe(
      'is an empty key, which cannot be stored: give every key a name',
    );
  });

  it('is a JSON value when given: undefined, which JSON cannot carry, is refused', () => {
    expect(executionInputValueSchema.safeParse(undefined).success).toBe(false);
    expect(executionInputValueSchema.safeParse(null).success).toBe(true);
  });
});
