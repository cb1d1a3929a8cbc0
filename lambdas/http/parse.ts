/*
 * Parsing a request by its declaration: the caller from the authorizer, path parameters (404 when
 * malformed), query and header parameters and the JSON body (400 with details, 413 when too large).
 */
import * as z from 'zod/mini';
import { NotFoundError, PayloadTooLargeError, UnauthorizedError, ValidationError } from '../core/errors.ts';
import { type Principal, principalSchema } from '../core/principal.ts';
import { LIMITS } from '../core/schemas/common.ts';
import '../core/zod-locale.ts';
import { assertStorableJson } from '../core/schemas/storable.ts';
import type { ParameterSpec } from '../operations/declaration.ts';
import { findHeader } from './headers.ts';
import type { HttpEvent } from './response.ts';

/** The caller as established by the authorizer; a request without one never reached a handler on AWS. */
export function principalOf(event: HttpEvent): Principal {
  const parsed = principalSchema.safeParse(event.requestContext?.authorizer ?? {});
  if (!parsed.success) throw new UnauthorizedError(undefined, { cause: parsed.error });
  return parsed.data;
}

function zodDetails(error: z.core.$ZodError) {
  return error.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message }));
}

/** Parses and validates a JSON body; an absent body is treated as `{}` unless `required`. */
export function parseBody<S extends z.ZodMiniType>(
  event: HttpEvent,
  schema: S,
  required: boolean,
): z.infer<S> {
  const raw = event.body ?? '';
  const text = event.isBase64Encoded ? Buffer.from(raw, 'base64').toString('utf8') : raw;
  if (Buffer.byteLength(text, 'utf8') > LIMITS.bodyBytes) {
    throw new PayloadTooLargeError(`The request body exceeds ${LIMITS.bodyBytes} bytes.`);
  }
  let value: unknown = {};
  if (text.trim() === '') {
    if (required) throw new ValidationError('A JSON request body is required.');
  } else {
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw new ValidationError('The request body is not valid JSON.', { cause: error });
    }
    assertStorableJson(value);
  }
  const result = z.safeParse(schema, value);
  if (!result.success) {
    throw new ValidationError('The request body is invalid.', {
      details: zodDetails(result.error),
      cause: result.error,
    });
  }
  return result.data;
}

/**
 * Validates the path parameters with their schemas. An id outside its length and alphabet names
 * no resource: a 404, answered without touching the database.
 */
export function parsePathParameters(
  event: HttpEvent,
  schemas: Readonly<Record<string, z.ZodMiniType<string>>>,
): Record<string, string> {
  const values: Record<string, string> = {};
  for (const [name, schema] of Object.entries(schemas)) {
    const result = z.safeParse(schema, event.pathParameters?.[name]);
    if (!result.success) {
      const given = JSON.stringify(event.pathParameters?.[name] ?? '');
      // A parameter of a few fixed values (an enum) says which; any other is an id.
      const options = (schema as { options?: unknown }).options;
      throw new NotFoundError(
        Array.isArray(options)
          ? `Nothing here has the ${name} ${given}: it is one of ${options.join(', ')}.`
          : `Nothing here has the ${name} ${given}: it is not an id this API gives (check the ${name} in the path).`,
        { cause: result.error },
      );
    }
    values[name] = result.data;
  }
  return values;
}

/**
 * Parses parameters by their specs from a map of raw values (API Gateway keeps the last of
 * repeated query parameters); a value that does not parse is a 400 naming it.
 */
export function parseParameters(
  specs: Readonly<Record<string, ParameterSpec>>,
  read: (name: string) => string | undefined,
  where: 'query parameter' | 'header',
): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(specs)) {
    const result = z.safeParse(spec.schema, read(name));
    if (!result.success) {
      throw new ValidationError(
        spec.invalid ?? `The ${where} ${name} is invalid: ${result.error.issues[0]?.message}.`,
        {
          cause: result.error,
        },
      );
    }
    if (result.data !== undefined) values[name] = result.data;
  }
  return values;
}

export const queryValue = (event: HttpEvent) => (name: string) =>
  event.queryStringParameters?.[name] ?? undefined;
export const headerValue = (event: HttpEvent) => (name: string) => findHeader(event.headers, name);
