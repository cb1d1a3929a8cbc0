/*
 * Delivery of events: the fan-out (one outbox event → one queued delivery per subscribed webhook,
 * and the event bus), and one delivery attempt (signed POST to the checked address, recorded,
 * retried after RETRY_DELAYS_SECONDS, a 410 disables the webhook, a deleted webhook gets nothing).
 * Two lanes, each its own queue and deliverer: a receiver that leaves a fast-lane POST unanswered
 * for FAST_LANE_ANSWER_MS is moved to the slow lane, so it never holds another team's delivery.
 */
import * as z from 'zod/mini';
import { type DomainEvent, domainEventSchema, envelopeOf } from '../core/events.ts';
import type { Clock, IdGenerator } from '../core/ports/common.ts';
import type { Delivery, SecretKeyProvider, WebhookRecord, WebhookRepository } from './ports.ts';
import { DELIVERY_TIMEOUT_MS, type PostResult } from './post.ts';
import { openSecret, signWebhook } from './secret.ts';
import { slackMessage } from './slack.ts';
import { wantsEvent } from './subscription.ts';
import type { CheckedTarget } from './url-guard.ts';

/** Waits after the 1st, 2nd, … failed attempt: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h; then failed. */
export const RETRY_DELAYS_SECONDS = [5, 300, 1800, 7200, 18_000, 36_000, 36_000] as const;
export const MAX_ATTEMPTS = RETRY_DELAYS_SECONDS.length + 1;

/**
 * How long the fast lane waits for an answer. A receiver silent for longer is moved aside: marked
 * slow, the same attempt sent again in the slow lane with the whole DELIVERY_TIMEOUT_MS (a duplicate
 * the receiver deduplicates by webhook-id), and its later deliveries go there directly. The fast
 * lane's invocations are thus held at most this long by any POST.
 */
export const FAST_LANE_ANSWER_MS = 1_500;
/** A slow receiver that answers within this in the slow lane goes back to the fast one (well within its budget: no flapping). */
export const FAST_AGAIN_MS = FAST_LANE_ANSWER_MS / 2;

/** The fast lane (every webhook's, first) and the slow lane (receivers that answered too late). */
export type DeliveryLane = 'fast' | 'slow';

/** The lane of a webhook's next deliveries. */
export const laneOf = (webhook: Pick<WebhookRecord, 'slowSince'>): DeliveryLane =>
  webhook.slowSince ? 'slow' : 'fast';

/** One queued delivery: which webhook gets which event (ids and states only, as the event is). */
export const deliveryMessageSchema = z.object({
  teamId: z.string(),
  webhookId: z.string(),
  event: domainEventSchema,
  /** Attempts made before this message was queued (in the fast lane, before it moved aside). */
  attemptsBefore: z.optional(z.int().check(z.nonnegative(), z.lte(MAX_ATTEMPTS))),
});
export type DeliveryMessage = z.infer<typeof deliveryMessageSchema>;

/** The attempt a receive of `message` is: the receive count after the attempts made before it. */
export const attemptOf = (message: DeliveryMessage, receiveCount: number): number =>
  (message.attemptsBefore ?? 0) + receiveCount;

export interface FanOutDeps {
  webhooks: Pick<WebhookRepository, 'list'>;
  /** Queues the deliveries in a lane's queue (SQS on AWS, the local queue locally). */
  enqueue: (messages: DeliveryMessage[], lane: DeliveryLane) => Promise<void>;
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
        wantsEvent(webhook, event.type) &&
        webhook.createdAt <= event.timestamp,
    );
    const lanes = (['fast', 'slow'] as const).map((lane) =>
      targets
        .filter((webhook) => laneOf(webhook) === lane)
        .map((webhook) => ({ teamId: event.data.teamId, webhookId: webhook.id, event })),
    );
    await Promise.all([
      ...lanes.map((messages, index) =>
        messages.length > 0 ? enqueue(messages, index === 0 ? 'fast' : 'slow') : undefined,
      ),
      publish([event]),
    ]);
    return targets.length;
  };
}

/** The lane a deliverer consumes; the fast one moves slow receivers' deliveries to the slow one. */
export type DeliveringLane =
  | { lane: 'fast'; moveAside: (message: DeliveryMessage) => Promise<void> }
  | { lane: 'slow' };

export interface DeliverDeps {
  webhooks: Pick<WebhookRepository, 'get' | 'disable' | 'recordDelivery' | 'markSlow'>;
  secretKey: SecretKeyProvider;
  checkUrl: (url: string) => Promise<CheckedTarget>;
  post: (
    target: CheckedTarget,
    headers: Record<string, string>,
    body: string,
    timeoutMs: number,
  ) => Promise<PostResult>;
  clock: Clock;
  ids: IdGenerator;
  route: DeliveringLane;
}

export type DeliverOutcome =
  | { outcome: 'delivered'; status: number }
  /** The webhook is gone or disabled: nothing is sent, the message is done. */
  | { outcome: 'dropped'; reason: 'deleted' | 'disabled' }
  | { outcome: 'retry'; afterSeconds: number; reason: string }
  | { outcome: 'failed'; reason: string }
  | { outcome: 'disabled' }
  /** Queued in the slow lane (the receiver is slow): this message is done. */
  | { outcome: 'moved'; reason: string };

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

/** The headers and body of an attempt to a Slack incoming webhook: its message, unsigned (the URL is the secret). */
export function slackRequest(event: DomainEvent) {
  return {
    body: JSON.stringify(slackMessage(event)),
    headers: { 'content-type': 'application/json', 'user-agent': 'pipeline-synthesis-webhooks/1' },
  };
}

/** Attempt number `attempt` (1-based) of one queued delivery, in the deliverer's lane. */
export function makeDeliver(deps: DeliverDeps) {
  const { route } = deps;
  const budgetMs = route.lane === 'fast' ? FAST_LANE_ANSWER_MS : DELIVERY_TIMEOUT_MS;
  return async (message: DeliveryMessage, attempt: number): Promise<DeliverOutcome> => {
    const webhook = await deps.webhooks.get(message.teamId, message.webhookId);
    if (!webhook) return { outcome: 'dropped', reason: 'deleted' };
    if (webhook.disabledAt !== null) return { outcome: 'dropped', reason: 'disabled' };
    // Queued before its receiver turned out slow: it waits in the slow lane, holding no one else's.
    if (route.lane === 'fast' && laneOf(webhook) === 'slow') {
      await route.moveAside({ ...message, attemptsBefore: attempt - 1 });
      return { outcome: 'moved', reason: 'the receiver is slow' };
    }
    const startedAt = deps.clock.now();
    const result = await attemptPost(deps, webhook, message, startedAt, budgetMs);
    const durationMs = Math.max(0, deps.clock.now().getTime() - startedAt.getTime());
    if (route.lane === 'fast' && 'timedOut' in result && result.timedOut) {
      // Not an attempt of its own (nor recorded as one): the slow lane makes it with the whole budget.
      await route.moveAside({ ...message, attemptsBefore: attempt - 1 });
      await deps.webhooks.markSlow(webhook.teamId, webhook.id, startedAt.toISOString());
      return { outcome: 'moved', reason: result.error };
    }
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
      durationMs,
      attemptedAt: startedAt.toISOString(),
      status: delivered ? 'delivered' : retryIn !== undefined ? 'pending' : 'failed',
      responseStatus: status,
      nextAttemptAt:
        retryIn !== undefined
          ? new Date(startedAt.getTime() + durationMs + retryIn * 1000).toISOString()
          : null,
      // A category, never the connection's or TLS's own words (they would probe the receiver's network).
      error: delivered ? null : 'error' in result ? errorCategory(result.error) : reason,
    };
    await deps.webhooks.recordDelivery(delivery);
    if (delivered) {
      // Answered well in time again: its next deliveries take the fast lane.
      if (laneOf(webhook) === 'slow' && durationMs <= FAST_AGAIN_MS)
        await deps.webhooks.markSlow(webhook.teamId, webhook.id, null);
      return { outcome: 'delivered', status: status as number };
    }
    if (gone) {
      await deps.webhooks.disable(webhook.teamId, webhook.id, startedAt.toISOString());
      return { outcome: 'disabled' };
    }
    if (retryIn !== undefined) return { outcome: 'retry', afterSeconds: retryIn, reason };
    return { outcome: 'failed', reason };
  };
}

/** The signed POST to the checked address, within `budgetMs`; never throws. */
async function attemptPost(
  deps: DeliverDeps,
  webhook: WebhookRecord,
  message: DeliveryMessage,
  at: Date,
  budgetMs: number,
): Promise<PostResult> {
  try {
    // Checked again at every attempt: the name may resolve elsewhere now.
    const target = await deps.checkUrl(webhook.url).catch(() => {
      throw new RefusedTarget();
    });
    const { body, headers } =
      webhook.format === 'slack'
        ? slackRequest(message.event)
        : signedRequest(openSecret(webhook.sealedSecret, await deps.secretKey()), message.event, at);
    return await deps.post(target, headers, body, budgetMs);
  } catch (error) {
    return {
      error:
        error instanceof RefusedTarget ? REFUSED : error instanceof Error ? error.message : String(error),
    };
  }
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
