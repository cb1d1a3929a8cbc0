/**
 * The query parameters of every list operation: `limit` and the opaque `cursor` of the page before.
 */
import * as z from 'zod/mini';
import { LIMITS } from '../core/schemas/common.ts';
import type { ParameterSpec } from './declaration.ts';

/** `limit`: an integer from 1 to LIMITS.pageSize, 20 when absent. */
const limitSchema = z
  .pipe(
    z.optional(z.string()),
    z.transform((text) => (text === undefined ? 20 : Number(text))),
  )
  .check(z.refine((value) => Number.isInteger(value) && value >= 1 && value <= LIMITS.pageSize));

export const pageQuery = {
  limit: {
    schema: limitSchema,
    description: `Items per page, 1 to ${LIMITS.pageSize} (default 20).`,
    invalid: `limit must be an integer from 1 to ${LIMITS.pageSize}.`,
    documented: { type: 'integer', minimum: 1, maximum: LIMITS.pageSize, default: 20 },
  },
  cursor: {
    schema: z.optional(z.string().check(z.minLength(1))),
    description: 'The `nextCursor` of the previous page; opaque.',
    invalid: 'cursor must be the nextCursor of a previous page.',
    documented: { type: 'string', minLength: 1 },
  },
} satisfies Record<string, ParameterSpec>;
