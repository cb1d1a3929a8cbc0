/* GET /pipelines/{pipelineId}/approval-rules: the rules approving a run of the pipeline must pass. */
import { idSchema } from '../core/schemas/common.ts';
import { storedApprovalRulesSchema } from '../core/schemas/review.ts';
import { makeGetApprovalRules } from '../core/use-cases/approval-rules.ts';
import { operationHandler } from '../http/operation.ts';
import { approvalRulesStoreFromEnv, pipelineReadsFromEnv } from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';

export const getApprovalRules = defineOperation({
  name: 'get-approval-rules',
  method: 'GET',
  path: '/pipelines/{pipelineId}/approval-rules',
  summary: "The pipeline's approval rules (the defaults until an admin sets them).",
  access: { data: 'read', settings: 'read' },
  params: { pipelineId: idSchema },
  response: { status: 200, schema: storedApprovalRulesSchema },
  errors: [404],
});

export const handler = /* @__PURE__ */ operationHandler(getApprovalRules, () => {
  const get = makeGetApprovalRules({
    pipelines: pipelineReadsFromEnv(),
    approvalRules: approvalRulesStoreFromEnv(),
  });
  return async ({ principal, params }) => ({ body: await get(principal, params.pipelineId) });
});
