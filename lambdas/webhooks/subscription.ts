/*
 * Which events a webhook receives: its list, or every type (those added in later releases too)
 * when it was created without one. Plain data and functions: the fan-out and the API read it.
 */
import type { WebhookRecord } from './ports.ts';

/**
 * The event types of the first release, which a webhook created without a list was stored with
 * before `allEventTypes` was kept: a stored list holding all of them was such a webhook's.
 */
export const FIRST_RELEASE_TYPES: readonly string[] = [
  'synthesis_run.generated',
  'synthesis_run.failed',
  'synthesis_run.approved',
  'synthesis_run.rejected',
  'synthesis_run.evaluated',
  'configuration.activated',
  'rollout.started',
  'rollout.promoted',
  'rollout.rolled_back',
  'pipeline.deleted',
  'api_token.created',
  'api_token.revoked',
  'webhook.created',
  'webhook.deleted',
  'approval_rules.updated',
  'team_settings.updated',
];

/** Whether a webhook receives every type, those added since its creation included. */
export function receivesAllTypes(webhook: Pick<WebhookRecord, 'eventTypes' | 'allEventTypes'>): boolean {
  if (webhook.allEventTypes !== undefined) return webhook.allEventTypes;
  const stored = new Set<string>(webhook.eventTypes);
  return FIRST_RELEASE_TYPES.every((type) => stored.has(type));
}

/** Whether a webhook receives events of `type`. */
export function wantsEvent(
  webhook: Pick<WebhookRecord, 'eventTypes' | 'allEventTypes'>,
  type: string,
): boolean {
  return receivesAllTypes(webhook) || (webhook.eventTypes as readonly string[]).includes(type);
}
