/*
 * The records and ports of webhooks: store/webhooks.ts implements the repository on DynamoDB,
 * wiring/ gives the encryption key, tests fake both.
 */
import * as z from 'zod/mini';
import { type DomainEvent, eventTypeSchema } from '../core/events.ts';
import type { PageRequest } from '../core/ports/common.ts';
import type { Page } from '../core/schemas/common.ts';

/** standard: the Standard Webhooks envelope, signed; slack: Slack's incoming-webhook body, unsigned (its URL is the secret). */
export const WEBHOOK_FORMATS = ['standard', 'slack'] as const;
export type WebhookFormat = (typeof WEBHOOK_FORMATS)[number];

/** A team's webhook as stored: the secret only sealed (AES-256-GCM), never in plaintext. */
export const webhookRecordSchema = z.object({
  id: z.string(),
  teamId: z.string(),
  url: z.string(),
  eventTypes: z.array(eventTypeSchema),
  /**
   * Created without a list: every type, those added after its creation too (subscription.ts
   * `wantsEvent`). Absent on webhooks stored before the flag: those are read from their list.
   */
  allEventTypes: z.optional(z.boolean()),
  description: z.nullable(z.string()),
  createdAt: z.string(),
  createdBy: z.string(),
  disabledAt: z.nullable(z.string()),
  sealedSecret: z.string(),
  /**
   * Set when the receiver left a fast-lane POST unanswered (webhooks/deliver.ts): its deliveries go
   * to the slow lane until one is answered in time again. Absent on webhooks that never were slow.
   */
  slowSince: z.optional(z.nullable(z.string())),
  /** What is POSTed: the signed envelope (standard, also when absent) or a Slack message (webhooks/slack.ts). */
  format: z.optional(z.enum(WEBHOOK_FORMATS)),
});
export type WebhookRecord = z.infer<typeof webhookRecordSchema>;

/** One attempt at delivering one event to one webhook. */
export const deliverySchema = z.object({
  id: z.string(),
  webhookId: z.string(),
  eventId: z.string(),
  eventType: eventTypeSchema,
  attempt: z.number(),
  status: z.enum(['pending', 'delivered', 'failed']),
  responseStatus: z.nullable(z.number()),
  durationMs: z.number(),
  attemptedAt: z.string(),
  nextAttemptAt: z.nullable(z.string()),
  /** Why the attempt failed, in words (a timeout, a refused address); null when delivered. */
  error: z.optional(z.nullable(z.string())),
});
export type Delivery = z.infer<typeof deliverySchema>;

export interface WebhookRepository {
  /** Stores the webhook and `event` in one transaction; the team's `maxPerTeam`-th + 1 is a 400. */
  create(webhook: WebhookRecord, event: DomainEvent, maxPerTeam: number): Promise<void>;
  /** The team's webhooks (at most the per-team limit), newest first. */
  list(teamId: string): Promise<WebhookRecord[]>;
  get(teamId: string, webhookId: string): Promise<WebhookRecord | null>;
  /** Deletes the webhook and writes `event`; a missing one is a NotFoundError. */
  remove(teamId: string, webhookId: string, event: DomainEvent): Promise<void>;
  /** Sets disabledAt (a 410 from the receiver); a deleted webhook stays deleted. */
  disable(teamId: string, webhookId: string, at: string): Promise<void>;
  /** Sets slowSince (`at`), or clears it with null; a deleted webhook stays deleted. */
  markSlow(teamId: string, webhookId: string, at: string | null): Promise<void>;
  recordDelivery(delivery: Delivery): Promise<void>;
  /** A webhook's deliveries, newest first (kept 30 days). */
  listDeliveries(webhookId: string, page: PageRequest): Promise<Page<Delivery>>;
}

/** The AES-256 key that seals webhook secrets (Secrets Manager on AWS). */
export type SecretKeyProvider = () => Promise<Buffer>;
