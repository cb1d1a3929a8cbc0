/**
 * Where a JSON value departs from a JSON Schema of the OpenAPI document: a required property
 * missing, a property the schema does not list, a wrong type or enum value. Covers the schema
 * forms the document uses for answers (object, array, scalar types, enum); others pass.
 */
type Schema = {
  type?: string | string[];
  required?: string[];
  properties?: Record<string, Schema>;
  additionalProperties?: boolean | Schema;
  items?: Schema;
  enum?: unknown[];
};

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

export function shapeMismatches(schema: Schema, value: unknown, path = '$'): string[] {
  const actual = typeOf(value);
  const types = schema.type === undefined ? [] : [schema.type].flat();
  if (types.length > 0 && !types.includes(actual) && !(actual === 'integer' && types.includes('number'))) {
    return [`${path}: ${actual}, documented as ${types.join(' or ')}`];
  }
  if (schema.enum && !schema.enum.includes(value))
    return [`${path}: ${String(value)} is not among its values`];
  if (actual === 'array' && schema.items) {
    return (value as unknown[]).flatMap((item, index) =>
      shapeMismatches(schema.items as Schema, item, `${path}[${index}]`),
    );
  }
  if (actual !== 'object' || !schema.properties) return [];
  const record = value as Record<string, unknown>;
  const properties = schema.properties;
  return [
    ...(schema.required ?? []).filter((key) => !(key in record)).map((key) => `${path}.${key}: missing`),
    ...Object.entries(record).flatMap(([key, item]) => {
      const property = properties[key];
      if (property) return shapeMismatches(property, item, `${path}.${key}`);
      return schema.additionalProperties === undefined || schema.additionalProperties === false
        ? [`${path}.${key}: not documented`]
        : [];
    }),
  ];
}
