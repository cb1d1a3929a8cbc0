/*
 * Delivery of events: the fan-out (one outbox event → one queued delivery per subscribed webhook,
 * and the event bus), and one delivery attempt (signed POST to the checked address, recorded,
 * retried after RETRY_DELAYS_SECONDS, a 410 disables the webhook, a deleted webhook gets nothing).
 */
import * as z from 'zod/mini';
import { type DomainEvent, domainEventSchema, envelopeOf } from '../core/events.ts';
import type { Clock, IdGenerator } from '../core/ports/common.ts';
import type { Delivery, SecretKeyProvider, WebhookRepository } from './ports.ts';
import type { PostResult } from './post.ts';
import { openSecret, signWebhook } from './secret.ts';
import type { CheckedTarget } from './url-guard.ts';

/** Waits after the 1st, 2nd, … failed attempt: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h; then failed. */
export const RETRY_DELAYS_SECONDS = [5, 300, 1800, 7200, 18_000, 36_000, 36_000] as const;
export const MAX_ATTEMPTS = RETRY_DELAYS_SECONDS.length + 1;

/** One queued delivery: which webhook gets which event (ids and states only, as the event is). */
export const deliveryMessageSchema = z.object({
  teamId: z.string(),
  webhookId: z.string(),
  event: domainEventSchema,
});
export type DeliveryMessage = z.infer<typeof deliveryMessageSchema>;

export interface FanOutDeps {
  webhooks: Pick<WebhookRepository, 'list'>;
  /** Queues the deliveries (SQS on AWS, the local queue locally). */
  enqueue: (messages: DeliveryMessage[]) => Promise<void>;
  /** Puts the event on the stack's event bus (where there is none, the root passes one that puts nothing). */
  publish: (events: DomainEvent[]) => Promise<void>;
  /** The event with its actor's name (core/people.ts), as receivers get it; the stored event has ids only. */
  nameActor: (event: DomainEvent) => Promise<DomainEvent>;
}

/** One event from the outbox to every webhook of its team that wants it, and to the bus. */
export function makeFanOut({ webhooks, enqueue, publish, nameActor }: FanOutDeps) {
  return async (stored: DomainEvent): Promise<number> => {
    // A webhook receives the events committed from its creation on, never older ones.
    const [event, subscribed] = await Promise.all([nameActor(stored), webhooks.list(stored.data.teamId)]);
    const targets = subscribed.filter(
      (webhook) =>
        webhook.disabledAt === null &&
        webhook.eventTypes.includes(event.type) &&
        webhook.createdAt <= event.timestamp,
    );
    await Promise.all([
      targets.length > 0
        ? enqueue(targets.map((webhook) => ({ teamId: event.data.teamId, webhookId: webhook.id, event })))
        : undefined,
      publish([event]),
    ]);
    return targets.length;
  };
}

export interface DeliverDeps {
  webhooks: Pick<WebhookRepository, 'get' | 'disable' | 'recordDelivery'>;
  secretKey: SecretKeyProvider;
  checkUrl: (url: string) => Promise<CheckedTarget>;
  post: (target: CheckedTarget, headers: Record<string, string>, body: string) => Promise<PostResult>;
  clock: Clock;
  ids: IdGenerator;
}

export type DeliverOutcome =
  | { outcome: 'delivered'; status: number }
  /** The webhook is gone or disabled: nothing is sent, the message is done. */
  | { outcome: 'dropped'; reason: 'deleted' | 'disabled' }
  | { outcome: 'retry'; afterSeconds: number; reason: string }
  | { outcome: 'failed'; reason: string }
  | { outcome: 'disabled' };

/** The headers and body of one attempt, signed per Standard Webhooks. */
export function signedRequest(secret: string, event: DomainEvent, at: Date) {
  const body = JSON.stringify(envelopeOf(event));
  const timestamp = Math.floor(at.getTime() / 1000);
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'user-agent': 'pipeline-synthesis-webhooks/1',
      'webhook-id': event.id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signWebhook(secret, event.id, timestamp, body),
    },
  };
}

/** Attempt number `attempt` (1-based) of one queued delivery. */
export function makeDeliver(deps: DeliverDeps) {
  return async (message: DeliveryMessage, attempt: number): Promise<DeliverOutcome> => {
    const webhook = await deps.webhooks.get(message.teamId, message.webhookId);
    if (!webhook) return { outcome: 'dropped', reason: 'deleted' };
    if (webhook.disabledAt !== null) return { outcome: 'dropped', reason: 'disabled' };
    const startedAt = deps.clock.now();
    let result: PostResult;
    try {
      // Checked again at every attempt: the name may resolve elsewhere now.
      const target = await deps.checkUrl(webhook.url).catch(() => {
        throw new RefusedTarget();
      });
      const secret = openSecret(webhook.sealedSecret, await deps.secretKey());
      const { body, headers } = signedRequest(secret, message.event, startedAt);
      result = await deps.post(target, headers, body);
    } catch (error) {
      result = {
        error:
          error instanceof RefusedTarget ? REFUSED : error instanceof Error ? error.message : String(error),
      };
    }
    const durationMs = Math.max(0, deps.clock.now().getTime() - startedAt.getTime());
    const status = 'status' in result ? result.status : null;
    const delivered = status !== null && status >= 200 && status < 300;
    const gone = status === 410;
    const retryIn =
      !delivered && !gone && attempt < MAX_ATTEMPTS ? RETRY_DELAYS_SECONDS[attempt - 1] : undefined;
    const reason = 'error' in result ? result.error : `the receiver answered ${status}`;
    const delivery: Delivery = {
      id: deps.ids.newId(),
      webhookId: webhook.id,
      eventId: message.event.id,
      eventType: message.event.type,
      attempt,
      status: delivered ? 'delivered' : retryIn !== undefined ? 'pending' : 'failed',
      responseStatus: status,
      durationMs,
      attemptedAt: startedAt.toISOString(),
      nextAttemptAt:
        retryIn !== undefined
          ? new Date(startedAt.getTime() + durationMs + retryIn * 1000).toISOString()
          : null,
      // A category, never the connection's or TLS's own words (they would probe the receiver's network).
      error: delivered ? null : 'error' in result ? errorCategory(result.error) : reason,
    };
    await deps.webhooks.recordDelivery(delivery);
    if (delivered) return { outcome: 'delivered', status: status as number };
    if (gone) {
      await deps.webhooks.disable(webhook.teamId, webhook.id, startedAt.toISOString());
      return { outcome: 'disabled' };
    }
    if (retryIn !== undefined) return { outcome: 'retry', afterSeconds: retryIn, reason };
    return { outcome: 'failed', reason };
  };
}

/** The URL guard refused the target at this attempt (its name resolves where webhooks may not go). */
class RefusedTarget extends Error {}
const REFUSED = 'refused: the URL no longer resolves to an address webhooks may reach';

/** What a failed attempt shows its team: a category of the failure, not the network's own message. */
const ERROR_CATEGORIES: ReadonlyArray<readonly [RegExp, string]> = [
  [/^refused: /, REFUSED],
  [/^no answer within /, 'timeout: no answer in time'],
  [/ENOTFOUND|EAI_AGAIN|getaddrinfo/, 'the host name did not resolve'],
  [/ECONNREFUSED/, 'connection refused'],
  [/certificate|CERT_|SSL|TLS|self[- ]signed|handshake/i, 'TLS failed'],
  [/ECONNRESET|socket hang up|EPIPE|aborted/i, 'connection reset'],
];

export function errorCategory(error: string): string {
  return ERROR_CATEGORIES.find(([pattern]) => pattern.test(error))?.[1] ?? 'connection failed';
}
