import * as z from 'zod/mini';
import {
  changePasswordBodySchema,
  createApiTokenBodySchema,
  loginBodySchema,
  magicLinkRequestBodySchema,
  magicLinkVerifyBodySchema,
  refreshBodySchema,
} from '../auth/schemas.ts';
import {
  activateBodySchema,
  activationSchema,
  configurationSchema,
  createPipelineBodySchema,
  executionSchema,
  pipelineSchema,
  recordExecutionsBodySchema,
  recordSignalsBodySchema,
  rejectBodySchema,
  signalSchema,
  synthesisRunSchema,
  synthesizeBodySchema,
} from '../core/schemas.ts';
import type { RouteDefinition } from '../routes.ts';

type JsonSchema = Record<string, unknown>;

/** What the route table does not say about an operation: its words and its bodies. */
export interface OperationDoc {
  summary: string;
  request?: z.ZodMiniType;
  /** Status and body of the success answer; `null` for an empty body. */
  success: { status: number; body: JsonSchema | null };
  /** Error statuses besides the ones every operation can answer. */
  errors?: number[];
}

const schema = (type: z.ZodMiniType, io: 'input' | 'output' = 'output'): JsonSchema => {
  // Refinements (unique ids, size limits of settings) cannot be expressed: they are checked at run time.
  const { $schema: _, ...rest } = z.toJSONSchema(type, { io, unrepresentable: 'any' }) as JsonSchema;
  return rest;
};
const page = (item: JsonSchema): JsonSchema => ({
  type: 'object',
  required: ['items', 'nextCursor'],
  properties: { items: { type: 'array', items: item }, nextCursor: { type: ['string', 'null'] } },
});
const object = (properties: Record<string, JsonSchema>): JsonSchema => ({ type: 'object', properties });
const anyObject: JsonSchema = { type: 'object' };

const run = schema(synthesisRunSchema);
const session = object({
  userId: { type: 'string' },
  teamId: { type: 'string' },
  accessTokenExpiresAt: { type: 'string' },
  refreshTokenExpiresAt: { type: 'string' },
  accessToken: { type: 'string', description: 'Only with delivery "body".' },
  refreshToken: { type: 'string', description: 'Only with delivery "body".' },
});

/** Every route of lambdas/routes.ts, by `METHOD path`; a test keeps the two in step. */
export const OPERATION_DOCS: Readonly<Record<string, OperationDoc>> = {
  'POST /pipelines/{pipelineId}/synthesize': {
    summary:
      'Start a synthesis run (asynchronous): answers the pending run and its Location; honours Idempotency-Key.',
    request: synthesizeBodySchema,
    success: { status: 202, body: run },
    errors: [404, 409, 503],
  },
  'GET /synthesis-runs/{id}': {
    summary: 'A synthesis run; poll it until generated or failed.',
    success: { status: 200, body: run },
    errors: [404],
  },
  'GET /me': {
    summary: 'The current user, their teams and how this request was authenticated.',
    success: { status: 200, body: anyObject },
  },
  'POST /pipelines': {
    summary: 'Create a pipeline with its first configuration (version 1).',
    request: createPipelineBodySchema,
    success: { status: 201, body: schema(pipelineSchema) },
  },
  'GET /pipelines': {
    summary: "The team's pipelines, newest first.",
    success: { status: 200, body: page(schema(pipelineSchema)) },
  },
  'GET /pipelines/{pipelineId}': {
    summary: 'One pipeline.',
    success: { status: 200, body: schema(pipelineSchema) },
    errors: [404],
  },
  'GET /pipelines/{pipelineId}/configurations/{configurationId}': {
    summary: 'One configuration of a pipeline.',
    success: { status: 200, body: schema(configurationSchema) },
    errors: [404],
  },
  'POST /pipelines/{pipelineId}/signals': {
    summary: 'Record up to 100 signals, all or nothing.',
    request: recordSignalsBodySchema,
    success: { status: 201, body: object({ signals: { type: 'array', items: schema(signalSchema) } }) },
    errors: [404, 409],
  },
  'POST /pipelines/{pipelineId}/executions': {
    summary: 'Record up to 100 executions, all or nothing.',
    request: recordExecutionsBodySchema,
    success: { status: 201, body: object({ executions: { type: 'array', items: schema(executionSchema) } }) },
    errors: [404, 409],
  },
  'POST /synthesis-runs/{id}/approve': {
    summary: 'Approve a generated run: its proposal becomes the active configuration, atomically.',
    success: { status: 200, body: run },
    errors: [404, 409],
  },
  'POST /synthesis-runs/{id}/reject': {
    summary: 'Reject a generated run, with an optional reason.',
    request: rejectBodySchema,
    success: { status: 200, body: run },
    errors: [404, 409],
  },
  'GET /synthesis-runs/{id}/evidence': {
    summary:
      "The signals and executions the run's findings cite, as the run read them, so a reviewer reads records, not ids.",
    success: {
      status: 200,
      body: object({
        signals: { type: 'array', items: schema(signalSchema) },
        executions: { type: 'array', items: schema(executionSchema) },
      }),
    },
    errors: [404],
  },
  'GET /synthesis-runs/{id}/diff': {
    summary: 'Base and proposed configurations of a run, compared slot by slot.',
    success: { status: 200, body: anyObject },
    errors: [404, 409],
  },
  'GET /pipelines/{pipelineId}/synthesis-runs': {
    summary: "A pipeline's runs, newest first; ?status filters.",
    success: { status: 200, body: page(run) },
    errors: [404],
  },
  'POST /pipelines/{pipelineId}/configurations/{configurationId}/activate': {
    summary: 'Activate an earlier configuration (roll back), recording who, when and why.',
    request: activateBodySchema,
    success: { status: 200, body: schema(activationSchema) },
    errors: [404, 409],
  },
  'GET /pipelines/{pipelineId}/activations': {
    summary: "The pipeline's configuration history, newest first.",
    success: { status: 200, body: page(schema(activationSchema)) },
    errors: [404],
  },
  'POST /auth/login': {
    summary: 'Sign in with email and password.',
    request: loginBodySchema,
    success: { status: 200, body: session },
    errors: [401, 429],
  },
  'POST /auth/refresh': {
    summary: 'Rotate the session.',
    request: refreshBodySchema,
    success: { status: 200, body: session },
  },
  'POST /auth/logout': {
    summary: 'End the session and clear its cookies.',
    success: { status: 204, body: null },
  },
  'POST /auth/magic-link': {
    summary: 'Mail a one-time sign-in link; always 202.',
    request: magicLinkRequestBodySchema,
    success: { status: 202, body: anyObject },
  },
  'GET /auth/magic-link': {
    summary: 'The page a sign-in link opens (HTML).',
    success: { status: 200, body: null },
  },
  'POST /auth/magic-link/verify': {
    summary: 'Exchange a magic-link token for a session.',
    request: magicLinkVerifyBodySchema,
    success: { status: 200, body: session },
    errors: [401, 403],
  },
  'POST /me/password': {
    summary: 'Set or change your password.',
    request: changePasswordBodySchema,
    success: { status: 204, body: null },
  },
  'GET /api-tokens': {
    summary: 'Your API tokens (never their secrets).',
    success: { status: 200, body: page(anyObject) },
  },
  'POST /api-tokens': {
    summary: 'Create an API token for one of your teams; the secret is shown once.',
    request: createApiTokenBodySchema,
    success: { status: 201, body: anyObject },
  },
  'DELETE /api-tokens/{id}': {
    summary: 'Revoke an API token.',
    success: { status: 204, body: null },
    errors: [404],
  },
  'GET /openapi.json': { summary: 'This document.', success: { status: 200, body: anyObject } },
  'GET /app': {
    summary: 'The review application for browsers (HTML); /app redirects to /app/.',
    success: { status: 200, body: null },
  },
  'GET /app/{proxy+}': {
    summary: "The review application's pages (the same HTML) and its content-hashed scripts and styles.",
    success: { status: 200, body: null },
    errors: [404],
  },
};

const ERROR_BODY: JsonSchema = {
  type: 'object',
  required: ['error', 'message'],
  properties: { error: { type: 'string' }, message: { type: 'string' }, details: {} },
};
const ERROR_TEXT: Record<number, string> = {
  400: 'VALIDATION_ERROR',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  429: 'RATE_LIMITED',
  500: 'INTERNAL_ERROR',
  503: 'SERVICE_UNAVAILABLE',
};

/** The OpenAPI 3.1 document of the routes, built from the same zod schemas that validate them. */
export function buildOpenApiDocument(routes: readonly RouteDefinition[]): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const route of routes) {
    const key = `${route.method} ${route.path}`;
    const doc = OPERATION_DOCS[key];
    if (!doc) throw new Error(`No OpenAPI description for ${key}`);
    const errors = [400, ...(route.authorized ? [401, 403] : []), ...(doc.errors ?? []), 413, 500];
    // `{proxy+}` (API Gateway's greedy parameter, the rest of the path) is named `proxy+` here too.
    const parameters = [...route.path.matchAll(/\{(\w+\+?)\}/g)].map(([, name]) => ({
      name,
      in: 'path',
      required: true,
      schema: { type: 'string' },
    }));
    paths[route.path] ??= {};
    (paths[route.path] as Record<string, JsonSchema>)[route.method.toLowerCase()] = {
      operationId: route.entry,
      summary: doc.summary,
      security: route.authorized ? [{ bearer: [] }, { sessionCookie: [] }] : [],
      ...(parameters.length > 0 ? { parameters } : {}),
      ...(doc.request
        ? {
            requestBody: {
              required: false,
              content: { 'application/json': { schema: schema(doc.request, 'input') } },
            },
          }
        : {}),
      responses: {
        [doc.success.status]: {
          description: 'Success',
          ...(doc.success.body ? { content: { 'application/json': { schema: doc.success.body } } } : {}),
        },
        ...Object.fromEntries(
          [...new Set(errors)].map((status) => [
            status,
            {
              description: ERROR_TEXT[status] ?? 'Error',
              content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
            },
          ]),
        ),
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Pipeline Synthesis API',
      version: '1',
      description:
        'Diagnoses LLM pipelines from their signals and history and proposes configurations for review.',
    },
    paths,
    components: {
      schemas: { Error: ERROR_BODY },
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
