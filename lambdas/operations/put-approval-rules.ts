/* PUT /pipelines/{pipelineId}/approval-rules: an admin replaces the pipeline's approval rules. */

import { idSchema } from '../core/schemas/common.ts';
import { approvalRulesSchema, storedApprovalRulesSchema } from '../core/schemas/review.ts';
import { makePutApprovalRules } from '../core/use-cases/approval-rules.ts';
import { operationHandler } from '../http/operation.ts';
import { nanoidGenerator, systemClock } from '../wiring/clock.ts';
import { approvalRulesStoreFromEnv, pipelineReadsFromEnv } from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';

export const putApprovalRules = defineOperation({
  name: 'put-approval-rules',
  method: 'PUT',
  path: '/pipelines/{pipelineId}/approval-rules',
  summary: "Replace the pipeline's approval rules (admins only); every field is required.",
  access: { data: 'read', settings: 'write' },
  params: { pipelineId: idSchema },
  body: {
    schema: approvalRulesSchema,
    required: true,
    example: {
      requireEvaluation: true,
      maxRegressions: 0,
      minEvaluatedCases: 20,
      forbidSelfApproval: true,
      allowApiTokens: false,
    },
  },
  response: { status: 200, schema: storedApprovalRulesSchema },
  errors: [404],
});

export const handler = /* @__PURE__ */ operationHandler(putApprovalRules, () => {
  const put = makePutApprovalRules({
    pipelines: pipelineReadsFromEnv(),
    approvalRules: approvalRulesStoreFromEnv(),
    clock: systemClock,
    ids: nanoidGenerator,
  });
  return async ({ principal, params, body }) => ({ body: await put(principal, params.pipelineId, body) });
});
