/**
 * Response shapes that several operations share (`{items, nextCursor}`, objects written out as
 * JSON Schema) and how a zod schema is documented.
 */
import * as z from 'zod/mini';
import type { JsonSchema } from './declaration.ts';

/** A zod schema as JSON Schema (refinements such as unique ids are checked at run time only). */
export const jsonSchemaOf = (type: z.ZodMiniType, io: 'input' | 'output' = 'output'): JsonSchema => {
  const { $schema: _, ...rest } = z.toJSONSchema(type, { io, unrepresentable: 'any' }) as JsonSchema;
  return rest;
};

/**
 * A list answer: `{items, nextCursor}`. A zod `item` stays a zod schema inside the JSON Schema:
 * the OpenAPI document writes it out (openapi.ts), so a function's init neither builds its JSON
 * Schema nor bundles z.toJSONSchema for a schema only the document shows.
 */
export function pageOf(item: z.ZodMiniType | JsonSchema): JsonSchema {
  return {
    type: 'object',
    required: ['items', 'nextCursor'],
    properties: {
      items: { type: 'array', items: item },
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
