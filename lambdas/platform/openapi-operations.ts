/**
 * The table of what the route table does not say about each operation: its summary, query and
 * header parameters, request body with an example, success body and extra error statuses.
 * lambdas/platform/openapi.ts turns it into the OpenAPI document; a test keeps both in step.
 */
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
  LIMITS,
  pipelineSchema,
  recordExecutionsBodySchema,
  recordSignalsBodySchema,
  rejectBodySchema,
  runStatusSchema,
  signalSchema,
  synthesisRunSchema,
  synthesizeBodySchema,
} from '../core/schemas.ts';

export type JsonSchema = Record<string, unknown>;

export interface ParameterDoc {
  name: string;
  in: 'query' | 'header';
  description: string;
  schema: JsonSchema;
}

/** A request body: the zod schema that validates it and an example it accepts. */
export interface RequestDoc {
  schema: z.ZodMiniType;
  example: Record<string, unknown>;
}

export interface OperationDoc {
  summary: string;
  parameters?: ParameterDoc[];
  request?: RequestDoc;
  /** Status and body of the success answer; `null` for an empty body. */
  success: { status: number; body: JsonSchema | null; headers?: Record<string, JsonSchema> };
  /** Error statuses besides the ones every operation can answer. */
  errors?: number[];
}

/** A zod schema as JSON Schema (refinements such as unique ids are checked at run time only). */
export const jsonSchemaOf = (type: z.ZodMiniType, io: 'input' | 'output' = 'output'): JsonSchema => {
  const { $schema: _, ...rest } = z.toJSONSchema(type, { io, unrepresentable: 'any' }) as JsonSchema;
  return rest;
};
const page = (item: JsonSchema): JsonSchema => ({
  type: 'object',
  required: ['items', 'nextCursor'],
  properties: { items: { type: 'array', items: item }, nextCursor: { type: ['string', 'null'] } },
});
const string: JsonSchema = { type: 'string' };
const nullableString: JsonSchema = { type: ['string', 'null'] };
const object = (properties: Record<string, JsonSchema>, required = Object.keys(properties)): JsonSchema => ({
  type: 'object',
  required,
  properties,
});
const anyObject: JsonSchema = { type: 'object' };

const pageParameters: ParameterDoc[] = [
  {
    name: 'limit',
    in: 'query',
    description: `Items per page, 1 to ${LIMITS.pageSize} (default 20).`,
    schema: { type: 'integer', minimum: 1, maximum: LIMITS.pageSize, default: 20 },
  },
  {
    name: 'cursor',
    in: 'query',
    description: 'The `nextCursor` of the previous page; opaque.',
    schema: string,
  },
];

const run = jsonSchemaOf(synthesisRunSchema);
const session = object(
  {
    session: object({
      id: string,
      userId: string,
      teamId: string,
      role: { type: 'string', enum: ['admin', 'member', 'viewer'] },
      expiresAt: string,
      accessTokenExpiresAt: string,
      refreshTokenExpiresAt: string,
    }),
    accessToken: { type: 'string', description: 'Only with delivery "body".' },
    refreshToken: { type: 'string', description: 'Only with delivery "body".' },
  },
  ['session'],
);
const me = object({
  user: object({ id: string, email: string, name: string, createdAt: string }),
  teams: {
    type: 'array',
    items: object({
      id: string,
      name: string,
      role: { type: 'string', enum: ['admin', 'member', 'viewer'] },
    }),
  },
  authentication: object(
    {
      method: { type: 'string', enum: ['api-token', 'session'] },
      teamId: string,
      role: { type: 'string', enum: ['admin', 'member', 'viewer'] },
      tokenId: string,
      sessionId: string,
    },
    ['method', 'teamId', 'role'],
  ),
});
const apiTokenProperties = {
  id: string,
  name: string,
  teamId: string,
  hint: { type: 'string', description: '`psa_…` and the last four characters.' },
  createdAt: string,
  lastUsedAt: nullableString,
  expiresAt: nullableString,
  revokedAt: nullableString,
};
const apiToken = object(apiTokenProperties);
const createdApiToken = object({
  ...apiTokenProperties,
  token: { type: 'string', description: 'The secret, shown this once.' },
});
const runDiff = object({
  runId: string,
  base: object({ id: string, version: { type: 'integer' } }),
  proposed: object({ id: string, version: { type: 'integer' } }),
  slots: {
    type: 'array',
    items: object({
      slotId: string,
      name: string,
      kind: string,
      status: { type: 'string', enum: ['changed', 'unchanged', 'added', 'removed'] },
      settings: { type: 'array', items: object({ key: string, before: {}, after: {} }) },
      changeIds: { type: 'array', items: string },
    }),
  },
});
const reasonExample = (reason: string) => ({ reason });

/** Every route of lambdas/routes.ts, by `METHOD path`; a test keeps the two in step. */
export const OPERATION_DOCS: Readonly<Record<string, OperationDoc>> = {
  'POST /pipelines/{pipelineId}/synthesize': {
    summary:
      'Start a synthesis run (asynchronous): answers the pending run and its Location; honours Idempotency-Key.',
    parameters: [
      {
        name: 'Idempotency-Key',
        in: 'header',
        description:
          'Repeating a request with the same key (within 24 hours, same pipeline and body) answers the same run.',
        schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7E]+$' },
      },
    ],
    request: { schema: synthesizeBodySchema, example: { synthesisHandler: 'heuristic-v1' } },
    success: {
      status: 202,
      body: run,
      headers: { Location: { type: 'string', description: 'The URL of the run to poll.' } },
    },
    errors: [404, 409, 429, 503],
  },
  'GET /synthesis-runs/{id}': {
    summary: 'A synthesis run; poll it until generated or failed.',
    success: { status: 200, body: run },
    errors: [404],
  },
  'GET /me': {
    summary: 'The current user, their teams and how this request was authenticated.',
    success: { status: 200, body: me },
  },
  'POST /pipelines': {
    summary: 'Create a pipeline with its first configuration (version 1).',
    request: {
      schema: createPipelineBodySchema,
      example: {
        name: 'Support answers',
        slots: [
          { id: 'retrieve', name: 'Retrieve documents', kind: 'retrieval', settings: { topK: 8 } },
          {
            id: 'answer-model',
            name: 'Answer model',
            kind: 'model',
            settings: { model: 'claude-sonnet-4-5', temperature: 0.2, maxTokens: 1024 },
          },
        ],
      },
    },
    success: { status: 201, body: jsonSchemaOf(pipelineSchema) },
  },
  'GET /pipelines': {
    summary: "The team's pipelines, newest first.",
    parameters: pageParameters,
    success: { status: 200, body: page(jsonSchemaOf(pipelineSchema)) },
  },
  'GET /pipelines/{pipelineId}': {
    summary: 'One pipeline.',
    success: { status: 200, body: jsonSchemaOf(pipelineSchema) },
    errors: [404],
  },
  'GET /pipelines/{pipelineId}/configurations/{configurationId}': {
    summary: 'One configuration of a pipeline.',
    success: { status: 200, body: jsonSchemaOf(configurationSchema) },
    errors: [404],
  },
  'POST /pipelines/{pipelineId}/signals': {
    summary: `Record up to ${LIMITS.batchSize} signals, all or nothing.`,
    request: {
      schema: recordSignalsBodySchema,
      example: {
        signals: [
          {
            kind: 'timeout',
            severity: 'critical',
            message: 'Retrieval timed out after 1500 ms',
            slotId: 'retrieve',
            occurredAt: '2026-11-20T09:30:00.000Z',
          },
        ],
      },
    },
    success: {
      status: 201,
      body: object({ signals: { type: 'array', items: jsonSchemaOf(signalSchema) } }),
    },
    errors: [404, 409],
  },
  'POST /pipelines/{pipelineId}/executions': {
    summary: `Record up to ${LIMITS.batchSize} executions, all or nothing.`,
    request: {
      schema: recordExecutionsBodySchema,
      example: {
        executions: [
          {
            status: 'failed',
            durationMs: 1620,
            error: 'retrieval timed out',
            startedAt: '2026-11-20T09:29:58.000Z',
            slotResults: [{ slotId: 'retrieve', status: 'failed', durationMs: 1500, error: 'timeout' }],
          },
        ],
      },
    },
    success: {
      status: 201,
      body: object({ executions: { type: 'array', items: jsonSchemaOf(executionSchema) } }),
    },
    errors: [404, 409],
  },
  'POST /synthesis-runs/{id}/approve': {
    summary: 'Approve a generated run: its proposal becomes the active configuration, atomically.',
    success: { status: 200, body: run },
    errors: [404, 409],
  },
  'POST /synthesis-runs/{id}/reject': {
    summary: 'Reject a generated run, with an optional reason.',
    request: {
      schema: rejectBodySchema,
      example: reasonExample('The retrieval timeout is already at what our latency budget allows.'),
    },
    success: { status: 200, body: run },
    errors: [404, 409],
  },
  'GET /synthesis-runs/{id}/evidence': {
    summary:
      "The signals and executions the run's findings cite, as the run read them, so a reviewer reads records, not ids.",
    success: {
      status: 200,
      body: object({
        signals: { type: 'array', items: jsonSchemaOf(signalSchema) },
        executions: { type: 'array', items: jsonSchemaOf(executionSchema) },
      }),
    },
    errors: [404],
  },
  'GET /synthesis-runs/{id}/diff': {
    summary: 'Base and proposed configurations of a run, compared slot by slot.',
    success: { status: 200, body: runDiff },
    errors: [404, 409],
  },
  'GET /pipelines/{pipelineId}/synthesis-runs': {
    summary: "A pipeline's runs, newest first; ?status filters.",
    parameters: [
      {
        name: 'status',
        in: 'query',
        description: 'Only runs in this status.',
        schema: { type: 'string', enum: [...runStatusSchema.options] },
      },
      ...pageParameters,
    ],
    success: { status: 200, body: page(run) },
    errors: [404],
  },
  'POST /pipelines/{pipelineId}/configurations/{configurationId}/activate': {
    summary: 'Activate an earlier configuration (roll back), recording who, when and why.',
    request: { schema: activateBodySchema, example: reasonExample('Version 2 doubled the p95 latency.') },
    success: { status: 200, body: jsonSchemaOf(activationSchema) },
    errors: [404, 409],
  },
  'GET /pipelines/{pipelineId}/activations': {
    summary: "The pipeline's configuration history, newest first.",
    parameters: pageParameters,
    success: { status: 200, body: page(jsonSchemaOf(activationSchema)) },
    errors: [404],
  },
  'POST /auth/login': {
    summary: 'Sign in with email and password.',
    request: {
      schema: loginBodySchema,
      example: { email: 'ada@example.com', password: 'correct horse battery staple', delivery: 'body' },
    },
    success: { status: 200, body: session },
    errors: [401, 403, 429],
  },
  'POST /auth/refresh': {
    summary: 'Rotate the session.',
    request: { schema: refreshBodySchema, example: { refreshToken: 'psr_…' } },
    success: { status: 200, body: session },
    errors: [401, 403],
  },
  'POST /auth/logout': {
    summary: 'End the session and clear its cookies.',
    success: { status: 204, body: null },
  },
  'POST /auth/magic-link': {
    summary: 'Mail a one-time sign-in link; always 202.',
    request: { schema: magicLinkRequestBodySchema, example: { email: 'ada@example.com' } },
    success: { status: 202, body: object({ message: string }) },
    errors: [429],
  },
  'GET /auth/magic-link': {
    summary: 'The page a sign-in link opens (HTML).',
    parameters: [
      { name: 'token', in: 'query', description: 'The one-time token of the link.', schema: string },
    ],
    success: { status: 200, body: null },
  },
  'POST /auth/magic-link/verify': {
    summary: 'Exchange a magic-link token for a session.',
    request: { schema: magicLinkVerifyBodySchema, example: { token: 'psm_…', delivery: 'cookie' } },
    success: { status: 200, body: session },
    errors: [401, 403],
  },
  'POST /me/password': {
    summary: 'Set or change your password.',
    request: {
      schema: changePasswordBodySchema,
      example: {
        currentPassword: 'correct horse battery staple',
        newPassword: 'a longer passphrase of mine',
      },
    },
    success: { status: 204, body: null },
  },
  'GET /api-tokens': {
    summary: 'Your API tokens (never their secrets).',
    parameters: pageParameters,
    success: { status: 200, body: page(apiToken) },
  },
  'POST /api-tokens': {
    summary: 'Create an API token for one of your teams (with a session); the secret is shown once.',
    request: {
      schema: createApiTokenBodySchema,
      example: { name: 'ci', teamId: 'V1StGXR8_Z5jdHi6B-myT', expiresAt: '2027-06-30T00:00:00.000Z' },
    },
    success: { status: 201, body: createdApiToken },
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
