/* The event types, as plain data: the CLI and the review app list them without loading a schema. */

/** Every event type; a webhook subscribes to some of them. */
export const EVENT_TYPES = [
  'synthesis_run.generated',
  'synthesis_run.failed',
  'synthesis_run.approved',
  'synthesis_run.rejected',
  'synthesis_run.evaluated',
  'configuration.activated',
  'rollout.started',
  'rollout.stepped',
  'rollout.promoted',
  'rollout.rolled_back',
  'pipeline.deleted',
  'api_token.created',
  'api_token.revoked',
  'webhook.created',
  'webhook.deleted',
  'approval_rules.updated',
  'team_settings.updated',
  'member.invited',
  'member.joined',
  'member.role_changed',
  'member.removed',
  'invitation.revoked',
] as const;
