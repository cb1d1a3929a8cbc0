/**
 * Parameters and response shapes that several operations share: list pages (`limit`, `cursor`,
 * `{items, nextCursor}`), and a zod schema or a written-out JSON Schema as documented.
 */
import * as z from 'zod/mini';
import { LIMITS } from '../core/schemas.ts';
import type { JsonSchema, ParameterSpec } from './declaration.ts';

/** A zod schema as JSON Schema (refinements such as unique ids are checked at run time only). */
export const jsonSchemaOf = (type: z.ZodMiniType, io: 'input' | 'output' = 'output'): JsonSchema => {
  const { $schema: _, ...rest } = z.toJSONSchema(type, { io, unrepresentable: 'any' }) as JsonSchema;
  return rest;
};

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
    schema: z.optional(z.string()),
    description: 'The `nextCursor` of the previous page; opaque.',
  },
} satisfies Record<string, ParameterSpec>;

/** A list answer: `{items, nextCursor}`. */
export function pageOf(item: z.ZodMiniType | JsonSchema): JsonSchema {
  return {
    type: 'object',
    required: ['items', 'nextCursor'],
    properties: {
      items: { type: 'array', items: isZodSchema(item) ? jsonSchemaOf(item) : item },
      nextCursor: { type: ['string', 'null'] },
    },
  };
}

/** An object whose properties are all required unless `required` lists fewer. */
export function objectOf(
  properties: Record<string, JsonSchema>,
  required = Object.keys(properties),
): JsonSchema {
  return { type: 'object', required, properties };
}

export const stringSchema: JsonSchema = { type: 'string' };
export const nullableString: JsonSchema = { type: ['string', 'null'] };

/** A zod schema, as opposed to a JSON Schema written out. */
export function isZodSchema(value: z.ZodMiniType | JsonSchema): value is z.ZodMiniType {
  return '_zod' in value;
}
