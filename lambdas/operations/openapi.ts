/**
 * Builds the OpenAPI 3.1 document of the API from the operation declarations, whose parameters and
 * bodies are the zod schemas that validate requests. Kept clean under Redocly's recommended rules
 * plus redocly.yaml's own (examples).
 */

import { jsonBodyRules } from '../core/schemas/storable.ts';
import {
  answerableStatuses,
  type JsonSchema,
  type OperationDeclaration,
  type ParameterSpec,
} from './declaration.ts';
import { isZodSchema, jsonSchemaOf } from './parameters.ts';

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

function parametersOf(operation: OperationDeclaration): JsonSchema[] {
  // API Gateway's greedy `{proxy+}` (the rest of the path) has no OpenAPI form: it is documented
  // as `{proxy}`, a parameter that may hold slashes.
  const path = [...(operation.documentedPath ?? operation.path).matchAll(/\{(\w+)(\+?)\}/g)].map(
    ([, name = '', greedy]) => ({
      name,
      ...(greedy ? { description: 'The rest of the path, slashes included.' } : {}),
      in: 'path',
      required: true,
      schema: operation.params?.[name] ? jsonSchemaOf(operation.params[name], 'input') : { type: 'string' },
    }),
  );
  const documented =
    (where: 'query' | 'header') =>
    ([name, spec]: [string, ParameterSpec]) => ({
      name: where === 'header' ? headerName(name) : name,
      in: where,
      description: spec.description,
      schema: spec.documented ?? jsonSchemaOf(spec.schema, 'input'),
    });
  return [
    ...path,
    ...Object.entries(operation.headers ?? {}).map(documented('header')),
    ...Object.entries(operation.query ?? {}).map(documented('query')),
  ];
}

/** `idempotency-key` → `Idempotency-Key`, as the document shows headers. */
function headerName(name: string): string {
  return name.replace(/(^|-)([a-z])/g, (_, dash: string, letter: string) => dash + letter.toUpperCase());
}

/** A response schema with every zod schema in it (a page's items: parameters.ts pageOf) as JSON Schema. */
function writtenOut(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(writtenOut);
  if (schema === null || typeof schema !== 'object') return schema;
  const object = schema as JsonSchema;
  if (isZodSchema(object)) return jsonSchemaOf(object);
  return Object.fromEntries(Object.entries(object).map(([key, value]) => [key, writtenOut(value)]));
}

function successResponse(operation: OperationDeclaration): Record<string, JsonSchema> {
  const { status, schema, contentType, headers, alsoAnswers = {}, documentedContent } = operation.response;
  const content = documentedContent
    ? {
        content: Object.fromEntries(
          Object.entries(documentedContent).map(([type, body]) => [type, { schema: body }]),
        ),
      }
    : schema
      ? { content: { 'application/json': { schema: writtenOut(schema) } } }
      : contentType
        ? { content: { [contentType]: { schema: { type: 'string' } } } }
        : {};
  const documentedHeaders = headers
    ? {
        headers: Object.fromEntries(
          Object.entries(headers).map(([name, header]) => [name, { schema: header }]),
        ),
      }
    : {};
  return {
    [status]: { description: 'Success', ...documentedHeaders, ...content },
    ...Object.fromEntries(
      Object.entries(alsoAnswers).map(([other, description]) => [other, { description }]),
    ),
  };
}

function requestBody(operation: OperationDeclaration): JsonSchema {
  if (operation.documentedBody) {
    const { required, content } = operation.documentedBody;
    return {
      requestBody: {
        required,
        content: Object.fromEntries(Object.entries(content).map(([type, body]) => [type, { ...body }])),
      },
    };
  }
  if (!operation.body) return {};
  const { schema, required, example } = operation.body;
  return {
    requestBody: {
      required,
      description: jsonBodyRules(),
      content: { 'application/json': { schema: jsonSchemaOf(schema, 'input'), example } },
    },
  };
}

function operationObject(operation: OperationDeclaration, usedErrors: Set<number>): JsonSchema {
  const successes = new Set([
    operation.response.status,
    ...Object.keys(operation.response.alsoAnswers ?? {}).map(Number),
  ]);
  const errors = answerableStatuses(operation)
    .filter((status) => !successes.has(status))
    .sort((a, b) => a - b);
  const own = operation.errorBodies ?? {};
  const errorAnswer = (status: number) => {
    const body = own[status];
    if (!body) return errorRef(status);
    return {
      description: body.description,
      content: { 'application/json': { schema: body.schema, example: body.example } },
    };
  };
  for (const status of errors) if (!own[status]) usedErrors.add(status);
  const parameters = parametersOf(operation);
  return {
    operationId: operation.name,
    summary: operation.summary,
    security: operation.public === undefined ? [{ bearer: [] }, { sessionCookie: [] }] : [],
    ...(parameters.length > 0 ? { parameters } : {}),
    ...requestBody(operation),
    responses: {
      ...successResponse(operation),
      ...Object.fromEntries(errors.map((status) => [status, errorAnswer(status)])),
    },
  };
}

/** Where the API may run: a deployed stack (its URL as variables) and the local stack's default. */
const GENERIC_SERVERS: readonly JsonSchema[] = [
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
];

/**
 * The document as served from `origin` (scheme, host and stage path of the request): that origin
 * first, so a tool that opens the document calls the API it came from, then the generic servers.
 * Without an origin (the static document the typed client is generated from), the generic list.
 */
export function documentServedFrom(document: JsonSchema, origin: string | undefined): JsonSchema {
  if (origin === undefined) return document;
  const generic = GENERIC_SERVERS.filter((server) => server.url !== origin);
  return {
    ...document,
    servers: [{ url: origin, description: 'The API this document was fetched from.' }, ...generic],
  };
}

/**
 * The path the document shows for an operation's route: its own documented one, else the route with
 * API Gateway's greedy `{proxy+}` as `{proxy}`.
 */
export function documentedPathOf(
  method: string,
  path: string,
  operations: readonly OperationDeclaration[],
): string {
  const declared = operations.find((operation) => operation.method === method && operation.path === path);
  return declared?.documentedPath ?? path.replace(/\{(\w+)\+\}/g, '{$1}');
}

/** The OpenAPI 3.1 document of the operations, built from the same zod schemas that validate them. */
export function buildOpenApiDocument(operations: readonly OperationDeclaration[]): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  const usedErrors = new Set<number>();
  const documented = operations.flatMap((operation) => [
    operation,
    ...(operation.alsoDocuments ?? []).map((route) => ({ ...operation, ...route })),
  ]);
  for (const operation of documented) {
    const documentedPath = documentedPathOf(operation.method, operation.path, [operation]);
    paths[documentedPath] = {
      ...paths[documentedPath],
      [operation.method.toLowerCase()]: operationObject(operation, usedErrors),
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
    servers: [...GENERIC_SERVERS],
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
