/**
 * The list of the API's operations, in the order the OpenAPI document shows them. The CDK stack
 * (lib/api.ts), the local gateway (local/) and the OpenAPI document are all built from it; adding
 * an operation is one module in this folder and one line here.
 */
import { activateConfiguration } from './activate-configuration.ts';
import { approveSynthesisRun } from './approve-synthesis-run.ts';
import { changePassword } from './change-password.ts';
import { createApiToken } from './create-api-token.ts';
import { createMonitor } from './create-monitor.ts';
import { createPipeline } from './create-pipeline.ts';
import { createWebhook } from './create-webhook.ts';
import type { OperationDeclaration } from './declaration.ts';
import { deleteMonitor } from './delete-monitor.ts';
import { deletePipeline } from './delete-pipeline.ts';
import { deleteWebhook } from './delete-webhook.ts';
import { evaluateFlag } from './evaluate-flag.ts';
import { evaluateFlags } from './evaluate-flags.ts';
import { exportPipeline } from './export-pipeline.ts';
import { getApprovalRules } from './get-approval-rules.ts';
import { getConfiguration } from './get-configuration.ts';
import { getDeletion } from './get-deletion.ts';
import { getExecution } from './get-execution.ts';
import { getMe } from './get-me.ts';
import { getMonitor } from './get-monitor.ts';
import { getOpenApi } from './get-openapi.ts';
import { getPipeline } from './get-pipeline.ts';
import { getPipelineMetrics } from './get-pipeline-metrics.ts';
import { getPipelineRollout } from './get-pipeline-rollout.ts';
import { getServingConfiguration } from './get-serving-configuration.ts';
import { getSynthesisRun } from './get-synthesis-run.ts';
import { getSynthesisRunChain } from './get-synthesis-run-chain.ts';
import { getSynthesisRunDiff } from './get-synthesis-run-diff.ts';
import { getSynthesisRunEffect } from './get-synthesis-run-effect.ts';
import { getSynthesisRunEvaluationSet } from './get-synthesis-run-evaluation-set.ts';
import { getSynthesisRunEvidence } from './get-synthesis-run-evidence.ts';
import { getTeamSettings } from './get-team-settings.ts';
import { ingestOtlpTraces } from './ingest-otlp-traces.ts';
import { inviteTeamMember } from './invite-team-member.ts';
import { listActivations } from './list-activations.ts';
import { listApiTokens } from './list-api-tokens.ts';
import { listAuditEvents } from './list-audit-events.ts';
import { listExecutions } from './list-executions.ts';
import { listMonitors } from './list-monitors.ts';
import { listPipelines } from './list-pipelines.ts';
import { listSignals } from './list-signals.ts';
import { listSynthesisRuns } from './list-synthesis-runs.ts';
import { listTeamInvitations } from './list-team-invitations.ts';
import { listTeamMembers } from './list-team-members.ts';
import { listWebhookDeliveries } from './list-webhook-deliveries.ts';
import { listWebhooks } from './list-webhooks.ts';
import { logIn } from './log-in.ts';
import { logOut } from './log-out.ts';
import { promotePipelineRollout } from './promote-pipeline-rollout.ts';
import { proposeChanges } from './propose-changes.ts';
import { putApprovalRules } from './put-approval-rules.ts';
import { recordExecutionFeedback } from './record-execution-feedback.ts';
import { recordExecutions } from './record-executions.ts';
import { recordSignals } from './record-signals.ts';
import { recordSynthesisRunEvaluations } from './record-synthesis-run-evaluations.ts';
import { refreshSession } from './refresh-session.ts';
import { rejectSynthesisRun } from './reject-synthesis-run.ts';
import { removeTeamMember } from './remove-team-member.ts';
import { requestMagicLink } from './request-magic-link.ts';
import { revokeApiToken } from './revoke-api-token.ts';
import { revokeTeamInvitation } from './revoke-team-invitation.ts';
import { rollbackPipelineRollout } from './rollback-pipeline-rollout.ts';
import { serveAppFiles, serveAppShell } from './serve-app.ts';
import { showMagicLinkPage } from './show-magic-link-page.ts';
import { synthesizePipeline } from './synthesize-pipeline.ts';
import { updateMonitor } from './update-monitor.ts';
import { updateTeamMember } from './update-team-member.ts';
import { updateTeamSettings } from './update-team-settings.ts';
import { verifyMagicLink } from './verify-magic-link.ts';

export const OPERATIONS: readonly OperationDeclaration[] = [
  synthesizePipeline,
  getSynthesisRun,
  getMe,
  createPipeline,
  listPipelines,
  getPipeline,
  getConfiguration,
  recordSignals,
  recordExecutions,
  ingestOtlpTraces,
  listExecutions,
  getExecution,
  listSignals,
  getPipelineMetrics,
  approveSynthesisRun,
  rejectSynthesisRun,
  getSynthesisRunEvidence,
  getSynthesisRunDiff,
  listSynthesisRuns,
  activateConfiguration,
  listActivations,
  getSynthesisRunEvaluationSet,
  recordSynthesisRunEvaluations,
  getApprovalRules,
  putApprovalRules,
  getPipelineRollout,
  promotePipelineRollout,
  rollbackPipelineRollout,
  getServingConfiguration,
  evaluateFlag,
  evaluateFlags,
  getSynthesisRunEffect,
  logIn,
  refreshSession,
  logOut,
  requestMagicLink,
  showMagicLinkPage,
  verifyMagicLink,
  changePassword,
  listApiTokens,
  createApiToken,
  revokeApiToken,
  listWebhooks,
  createWebhook,
  deleteWebhook,
  listWebhookDeliveries,
  listAuditEvents,
  getOpenApi,
  serveAppShell,
  serveAppFiles,
  getTeamSettings,
  updateTeamSettings,
  deletePipeline,
  getDeletion,
  exportPipeline,
  getSynthesisRunChain,
  listTeamMembers,
  inviteTeamMember,
  listTeamInvitations,
  revokeTeamInvitation,
  updateTeamMember,
  removeTeamMember,
  proposeChanges,
  recordExecutionFeedback,
  createMonitor,
  listMonitors,
  getMonitor,
  updateMonitor,
  deleteMonitor,
];
