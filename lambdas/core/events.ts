/*
 * Events: what a state change tells webhooks, EventBridge and the audit log. The use
 * cases build one with `newEvent` and hand it to the store, which writes it in the same transaction
 * as the change (store/events.ts `eventPut`): an event exists exactly when its change committed.
 */
import * as z from 'zod/mini';
import { EVENT_TYPES } from './event-types.ts';
import type { Principal } from './principal.ts';

export { EVENT_TYPES };

export const eventTypeSchema = /* @__PURE__ */ z.enum(EVENT_TYPES);
export type EventType = z.infer<typeof eventTypeSchema>;

/** Who made the change: a user through a session or an API token, or the service itself. */
export const actorSchema = /* @__PURE__ */ z.object({
  userId: /* @__PURE__ */ z.string(),
  credential: /* @__PURE__ */ z.enum(['session', 'api_token', 'system']),
  tokenId: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
  /**
   * Who that is, for people: the API token's name, else the user's email, or "system". Added when
   * an event is read or sent (core/people.ts), never stored; null when the record is gone.
   */
  name: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.nullable(/* @__PURE__ */ z.string())),
});
export type Actor = z.infer<typeof actorSchema>;

/** The service's own changes (the worker, the sweeper, the dead-letter handler). */
export const SYSTEM_ACTOR: Actor = { userId: 'system', credential: 'system' };

/** The actor of a change a principal requested. */
export function actorOf(principal: Pick<Principal, 'userId' | 'method' | 'tokenId'>): Actor {
  if (principal.method === 'api-token') {
    return {
      userId: principal.userId,
      credential: 'api_token',
      ...(principal.tokenId ? { tokenId: principal.tokenId } : {}),
    };
  }
  return { userId: principal.userId, credential: 'session' };
}

/** The monitor a monitor.* event is about: its definition (a few short fields, never its history). */
const monitorEventSchema = /* @__PURE__ */ z.object({
  id: /* @__PURE__ */ z.string(),
  name: /* @__PURE__ */ z.string(),
  metric: /* @__PURE__ */ z.string(),
  kind: /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.string()),
  comparator: /* @__PURE__ */ z.string(),
  threshold: /* @__PURE__ */ z.number(),
  windowMinutes: /* @__PURE__ */ z.number(),
  minExecutions: /* @__PURE__ */ z.number(),
});

/** Ids and states only, never a whole record: an envelope stays far below 20 KB. */
export const eventDataSchema = /* @__PURE__ */ z.object({
  teamId: /* @__PURE__ */ z.string(),
  pipelineId: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
  runId: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
  rolloutId: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
  configurationId: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
  status: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
  /** Ids of other resources an event names (a token, a webhook); ids only. */
  tokenId: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
  webhookId: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
  /** The person a team change is about (invited, joined, given a role, removed): a user id. */
  memberId: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
  invitationId: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
  /** The role a member change gives. */
  role: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
  /**
   * Names of the ids above, added when the audit log is read (core/event-names.ts), never stored:
   * the pipeline's name, the configuration's version, the member's email.
   */
  pipelineName: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
  configurationVersion: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.number()),
  memberName: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
  /** An admin's stated reason for passing an approval rule or a rollback (a short text they wrote). */
  overrideReason: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
  /** A rollout's share after a step (rollout.stepped), and the step's index. */
  percent: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.number()),
  step: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.number()),
  /** Why, in words (rollout.stepped: the figures that held). */
  reason: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
  /** A monitor's change of state (monitor.*): the monitor, the value judged, the state before, the app's page. */
  monitorId: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
  monitor: /* @__PURE__ */ z.optional(monitorEventSchema),
  value: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.nullable(/* @__PURE__ */ z.number())),
  previousStatus: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
  link: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
  actor: actorSchema,
});
export type EventData = z.infer<typeof eventDataSchema>;

/** The Standard Webhooks envelope, with the event's id (the `webhook-id` of every delivery). */
export const domainEventSchema = /* @__PURE__ */ z.object({
  id: /* @__PURE__ */ z.string(),
  type: eventTypeSchema,
  timestamp: /* @__PURE__ */ z.string(),
  data: eventDataSchema,
});
export type DomainEvent = z.infer<typeof domainEventSchema>;

/** What a receiver gets as the body: the envelope without our id (that is the `webhook-id` header). */
export function envelopeOf(event: DomainEvent): { type: EventType; timestamp: string; data: EventData } {
  return { type: event.type, timestamp: event.timestamp, data: event.data };
}

/**
 * The event of a change, stamped `at`. Its id is `evt_<key>_<type>`: `key` names the change (the
 * run, the activation, the token, the webhook, the rollout; a fresh id for a change that repeats,
 * such as a settings update), so an event written again by a retried change keeps its id, and a
 * receiver deduplicating by `webhook-id` sees one event per change.
 */
export function newEvent(
  type: EventType,
  data: EventData,
  { at, key }: { at: string; key: string },
): DomainEvent {
  return { id: `evt_${key}_${type.replace('.', '_')}`, type, timestamp: at, data: compact(data) };
}

/** Drops absent optional fields, so the stored and sent envelope holds no `undefined`. */
function compact(data: EventData): EventData {
  return Object.fromEntries(Object.entries(data).filter(([, value]) => value !== undefined)) as EventData;
}

/** The event of a run's move to `status`, with the run's ids. */
export function runEvent(
  run: { id: string; teamId: string; pipelineId: string },
  status: 'generated' | 'failed' | 'approved' | 'rejected',
  at: string,
  actor: Actor,
  extra: Pick<EventData, 'configurationId'> = {},
): DomainEvent {
  return newEvent(
    `synthesis_run.${status}`,
    { teamId: run.teamId, pipelineId: run.pipelineId, runId: run.id, status, actor, ...extra },
    { at, key: run.id },
  );
}
