/**
 * Answer bodies that several operations share, or that are written out as JSON Schema because no
 * zod schema validates them (they are built by the server, not parsed from a request).
 */
import type { ErrorBodySpec } from './declaration.ts';
import { nullableString, objectOf, stringSchema } from './parameters.ts';

export const sessionAnswer = objectOf(
  {
    session: objectOf({
      id: stringSchema,
      userId: stringSchema,
      teamId: stringSchema,
      role: { type: 'string', enum: ['admin', 'member', 'viewer'] },
      expiresAt: stringSchema,
      accessTokenExpiresAt: stringSchema,
      refreshTokenExpiresAt: stringSchema,
    }),
    accessToken: { type: 'string', description: 'Only with delivery "body".' },
    refreshToken: { type: 'string', description: 'Only with delivery "body".' },
  },
  ['session'],
);
export const meAnswer = objectOf({
  user: objectOf({ id: stringSchema, email: stringSchema, name: stringSchema, createdAt: stringSchema }),
  teams: {
    type: 'array',
    items: objectOf({
      id: stringSchema,
      name: stringSchema,
      role: { type: 'string', enum: ['admin', 'member', 'viewer'] },
    }),
  },
  authentication: objectOf(
    {
      method: { type: 'string', enum: ['api-token', 'session'] },
      teamId: stringSchema,
      role: { type: 'string', enum: ['admin', 'member', 'viewer'] },
      tokenId: stringSchema,
      sessionId: stringSchema,
    },
    ['method', 'teamId', 'role'],
  ),
});
const apiTokenProperties = {
  id: stringSchema,
  name: stringSchema,
  teamId: stringSchema,
  hint: { type: 'string', description: '`psa_…` and the last four characters.' },
  createdAt: stringSchema,
  lastUsedAt: nullableString,
  expiresAt: nullableString,
  revokedAt: nullableString,
};
export const apiTokenAnswer = objectOf(apiTokenProperties);
export const createdApiTokenAnswer = objectOf({
  ...apiTokenProperties,
  token: { type: 'string', description: 'The secret, shown this once.' },
});
export const runDiffAnswer = objectOf({
  runId: stringSchema,
  base: objectOf({ id: stringSchema, version: { type: 'integer' } }),
  proposed: objectOf({ id: stringSchema, version: { type: 'integer' } }),
  slots: {
    type: 'array',
    items: objectOf({
      slotId: stringSchema,
      name: stringSchema,
      kind: stringSchema,
      status: { type: 'string', enum: ['changed', 'unchanged', 'added', 'removed'] },
      settings: { type: 'array', items: objectOf({ key: stringSchema, before: {}, after: {} }) },
      changeIds: { type: 'array', items: stringSchema },
    }),
  },
});
const webhookProperties = {
  id: stringSchema,
  url: stringSchema,
  eventTypes: {
    type: 'array',
    items: stringSchema,
    description: 'The event types it receives now (every type when allEventTypes).',
  },
  allEventTypes: {
    type: 'boolean',
    description: 'Created without eventTypes: receives every type, those added in later releases too.',
  },
  description: nullableString,
  createdAt: stringSchema,
  disabledAt: { type: ['string', 'null'], description: 'Set when the receiver answered 410 Gone.' },
  format: {
    type: 'string',
    enum: ['standard', 'slack'],
    description:
      'standard: the signed Standard Webhooks envelope; slack: a Slack incoming-webhook message, unsigned.',
  },
};
export const webhookAnswer = objectOf(webhookProperties);
export const createdWebhookAnswer = objectOf({
  ...webhookProperties,
  secret: { type: 'string', description: 'The signing secret (`whsec_…`), shown this once.' },
});

const OFREP_ERROR_CODES = ['PARSE_ERROR', 'TARGETING_KEY_MISSING', 'INVALID_CONTEXT', 'GENERAL'];
const OFREP_KEY_EXAMPLE = 'pl_1234567890';

/** OFREP's error answers (its evaluationFailure, flagNotFound and bulkEvaluationFailure), by status. */
export function ofrepErrorBodies({ withKey }: { withKey: boolean }): Record<number, ErrorBodySpec> {
  const key = withKey ? { key: stringSchema } : {};
  const keyed = withKey ? { key: OFREP_KEY_EXAMPLE } : {};
  const bodies: Record<number, ErrorBodySpec> = {
    400: {
      description: 'OFREP evaluation failure: a body that is not JSON, or a context outside its schema.',
      schema: {
        type: 'object',
        required: [...Object.keys(key), 'errorCode'],
        properties: {
          ...key,
          errorCode: { type: 'string', enum: OFREP_ERROR_CODES },
          errorDetails: stringSchema,
        },
      },
      example: {
        ...keyed,
        errorCode: 'INVALID_CONTEXT',
        errorDetails:
          'The request body is invalid. context.targetingKey: Too big: expected string to have <=256 characters',
      },
    },
    500: {
      description: 'OFREP general error: something went wrong on our side.',
      schema: { type: 'object', properties: { errorDetails: stringSchema } },
      example: { errorDetails: 'Something went wrong on our side; the evaluation may be retried.' },
    },
  };
  if (withKey)
    bodies[404] = {
      description: 'OFREP flag not found: no pipeline of the team has this id (the flag key).',
      schema: {
        type: 'object',
        required: ['key', 'errorCode'],
        properties: {
          key: stringSchema,
          errorCode: { type: 'string', enum: ['FLAG_NOT_FOUND'] },
          errorDetails: stringSchema,
        },
      },
      example: {
        key: OFREP_KEY_EXAMPLE,
        errorCode: 'FLAG_NOT_FOUND',
        errorDetails: `No pipeline of your team has the id "${OFREP_KEY_EXAMPLE}" (the flag key is the pipeline id).`,
      },
    };
  return bodies;
}

/* The team member and invitation operations' answers. */

const role = { type: 'string', enum: ['admin', 'member', 'viewer'] };

export const memberAnswer = objectOf({
  userId: stringSchema,
  email: stringSchema,
  name: stringSchema,
  role,
  joinedAt: stringSchema,
});

export const invitationAnswer = objectOf({
  id: stringSchema,
  teamId: stringSchema,
  email: stringSchema,
  role,
  status: { type: 'string', enum: ['pending', 'accepted', 'revoked'] },
  expired: { type: 'boolean', description: 'Pending, but past expiresAt: its link no longer works.' },
  invitedBy: stringSchema,
  createdAt: stringSchema,
  expiresAt: { type: 'string', description: 'Seven days after createdAt.' },
  acceptedAt: nullableString,
  revokedAt: nullableString,
});
