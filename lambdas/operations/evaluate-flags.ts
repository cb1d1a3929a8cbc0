/*
 * POST /ofrep/v1/evaluate/flags: OpenFeature's remote bulk evaluation, every pipeline of the
 * caller's team for one context, with an ETag (If-None-Match answers 304 after one GetItem of the team's serving version).
 */
import * as z from 'zod/mini';
import { ofrepBulkSchema, ofrepRequestSchema } from '../core/schemas/ofrep.ts';
import { makeEvaluateFlags } from '../core/use-cases/ofrep.ts';
import { ofrepErrors } from '../http/ofrep.ts';
import { operationHandler } from '../http/operation.ts';
import { pipelineReadsFromEnv, teamServingFromEnv } from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';
import { ofrepErrorBodies } from './shapes.ts';

export const evaluateFlags = defineOperation({
  name: 'evaluate-flags',
  method: 'POST',
  path: '/ofrep/v1/evaluate/flags',
  summary:
    "OpenFeature Remote Evaluation Protocol (OFREP), bulk: every pipeline of the credential's team evaluated for the " +
    'context (up to 1,000, newest first), with an ETag; If-None-Match with it answers 304.',
  access: { data: 'read', startsServingVersions: true },
  rateLimit: 'evaluation',
  headers: {
    'if-none-match': {
      schema: z.optional(z.string().check(z.maxLength(1_000))),
      description: 'The ETag of an earlier bulk evaluation: 304 while every flag evaluates the same.',
      documented: { type: 'string' },
    },
  },
  body: {
    schema: ofrepRequestSchema,
    required: true,
    example: { context: { targetingKey: 'conversation-42' } },
  },
  response: {
    status: 200,
    schema: ofrepBulkSchema,
    headers: {
      ETag: { type: 'string', description: 'Names the evaluations (configuration and arm of each flag).' },
    },
    alsoAnswers: { 304: 'Not Modified: the ETag sent in If-None-Match still names the evaluations.' },
  },
  errors: [],
  errorBodies: ofrepErrorBodies({ withKey: false }),
});

export const handler = /* @__PURE__ */ operationHandler(evaluateFlags, () => {
  const evaluate = makeEvaluateFlags(
    { pipelines: pipelineReadsFromEnv(), teamServing: teamServingFromEnv() },
    Math.random,
    Date.now,
  );
  return async ({ principal, headers, body }) => {
    const { etag, flags } = await evaluate(principal, body.context.targetingKey, headers['if-none-match']);
    if (!flags) return { raw: { statusCode: 304, headers: { etag }, body: '' } };
    return { body: { flags }, headers: { etag } };
  };
}).use(ofrepErrors({ withKey: false }));
