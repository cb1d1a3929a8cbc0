/**
 * Builds the OpenAPI 3.1 document of the API from the route table (lambdas/routes.ts) and the
 * operation table (openapi-operations.ts), whose bodies come from the zod schemas that validate
 * requests. Kept clean under Redocly's recommended rules plus redocly.yaml's own (examples).
 */
import type { RouteDefinition } from '../routes.ts';
import { type JsonSchema, jsonSchemaOf, OPERATION_DOCS } from './openapi-operations.ts';

export { OPERATION_DOCS, type OperationDoc } from './openapi-operations.ts';

const ERROR_BODY: JsonSchema = {
  type: 'object',
  required: ['error', 'message'],
  properties: {
    error: { type: 'string' },
    message: { type: 'string' },
    details: { description: 'With VALIDATION_ERROR: what is wrong, by path.' },
  },
};

/** One reusable response per error status, with an example body such as the API answers. */
const ERRORS: Record<number, { name: string; code: string; message: string; details?: unknown }> = {
  400: {
    name: 'ValidationError',
    code: 'VALIDATION_ERROR',
    message: 'The request body is invalid.',
    details: [{ path: 'slots', message: 'Too small: expected array to have >=1 items' }],
  },
  401: {
    name: 'Unauthorized',
    code: 'UNAUTHORIZED',
    message: 'The credential is missing, invalid, expired or revoked.',
  },
  403: {
    name: 'Forbidden',
    code: 'FORBIDDEN',
    message: 'The credential has no permission for this resource.',
  },
  404: { name: 'NotFound', code: 'NOT_FOUND', message: 'No synthesis run with this id.' },
  409: {
    name: 'Conflict',
    code: 'CONFLICT',
    message: 'The run is pending; only a generated run can be approved.',
  },
  413: {
    name: 'PayloadTooLarge',
    code: 'PAYLOAD_TOO_LARGE',
    message: 'The request body is larger than 1000000 bytes.',
  },
  429: {
    name: 'RateLimited',
    code: 'RATE_LIMITED',
    message: 'Too many requests; retry after the time Retry-After gives.',
  },
  500: {
    name: 'InternalError',
    code: 'INTERNAL_ERROR',
    message: 'Something went wrong on our side; the request may be retried.',
  },
  503: {
    name: 'ServiceUnavailable',
    code: 'SERVICE_UNAVAILABLE',
    message: 'The synthesis job could not be queued; retry after the time Retry-After gives.',
  },
};
const RETRY_AFTER = { 'Retry-After': { description: 'Seconds to wait.', schema: { type: 'integer' } } };

function errorResponse(status: number): JsonSchema {
  const error = ERRORS[status];
  if (!error) throw new Error(`No OpenAPI error response for status ${status}`);
  const { code, message, details } = error;
  return {
    description: code,
    ...(status === 429 || status === 503 ? { headers: RETRY_AFTER } : {}),
    content: {
      'application/json': {
        schema: { $ref: '#/components/schemas/Error' },
        example: details === undefined ? { error: code, message } : { error: code, message, details },
      },
    },
  };
}

const errorRef = (status: number) => ({ $ref: `#/components/responses/${ERRORS[status]?.name}` });

/** The OpenAPI 3.1 document of the routes, built from the same zod schemas that validate them. */
export function buildOpenApiDocument(routes: readonly RouteDefinition[]): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  const usedErrors = new Set<number>();
  const entryUses = new Map<string, number>();
  for (const route of routes) {
    // Routes that share a function (the review application's) get distinct operation ids.
    const uses = (entryUses.get(route.entry) ?? 0) + 1;
    entryUses.set(route.entry, uses);
    const key = `${route.method} ${route.path}`;
    const doc = OPERATION_DOCS[key];
    if (!doc) throw new Error(`No OpenAPI description for ${key}`);
    const errors = [400, ...(route.authorized ? [401, 403] : []), ...(doc.errors ?? []), 413, 500];
    for (const status of errors) usedErrors.add(status);
    // API Gateway's greedy `{proxy+}` (the rest of the path) has no OpenAPI form: it is documented
    // as `{proxy}`, a parameter that may hold slashes.
    const documentedPath = route.path.replace(/\{(\w+)\+\}/g, '{$1}');
    const pathParameters = [...route.path.matchAll(/\{(\w+)(\+?)\}/g)].map(([, name, greedy]) => ({
      name,
      ...(greedy ? { description: 'The rest of the path, slashes included.' } : {}),
      in: 'path',
      required: true,
      schema: { type: 'string' },
    }));
    const parameters = [...pathParameters, ...(doc.parameters ?? [])];
    const { success } = doc;
    paths[documentedPath] ??= {};
    (paths[documentedPath] as Record<string, JsonSchema>)[route.method.toLowerCase()] = {
      operationId: uses === 1 ? route.entry : `${route.entry}-${uses}`,
      summary: doc.summary,
      security: route.authorized ? [{ bearer: [] }, { sessionCookie: [] }] : [],
      ...(parameters.length > 0 ? { parameters } : {}),
      ...(doc.request
        ? {
            requestBody: {
              required: false,
              content: {
                'application/json': {
                  schema: jsonSchemaOf(doc.request.schema, 'input'),
                  example: doc.request.example,
                },
              },
            },
          }
        : {}),
      responses: {
        [success.status]: {
          description: 'Success',
          ...(success.headers
            ? {
                headers: Object.fromEntries(
                  Object.entries(success.headers).map(([name, schema]) => [name, { schema }]),
                ),
              }
            : {}),
          ...(success.body ? { content: { 'application/json': { schema: success.body } } } : {}),
        },
        ...Object.fromEntries([...new Set(errors)].map((status) => [status, errorRef(status)])),
      },
    };
  }
  const responses = Object.fromEntries(
    [...usedErrors].sort((a, b) => a - b).map((status) => [ERRORS[status]?.name, errorResponse(status)]),
  );
  return {
    openapi: '3.1.0',
    info: {
      title: 'Pipeline Synthesis API',
      version: '1',
      description:
        'Diagnoses LLM pipelines from their signals and history and proposes configurations for review.',
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    servers: [
      {
        url: 'https://{restApiId}.execute-api.{region}.amazonaws.com/{stage}',
        description: 'A deployed stack: its ApiUrl output.',
        variables: {
          restApiId: { default: 'restApiId', description: 'The REST API id (the ApiUrl output).' },
          region: { default: 'us-east-1' },
          stage: { default: 'dev' },
        },
      },
      { url: 'http://127.0.0.1:3000', description: 'The local stack (npm start).' },
    ],
    paths,
    components: {
      schemas: { Error: ERROR_BODY },
      responses,
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description: 'An API token (psa_…) or a session access token.',
        },
        sessionCookie: { type: 'apiKey', in: 'cookie', name: 'ps_session' },
      },
    },
  };
}
