import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { newEvent } from '../../../lambdas/core/events.ts';
import {
  type DeliveryLane,
  type DeliveryMessage,
  FAST_AGAIN_MS,
  FAST_LANE_ANSWER_MS,
  MAX_ATTEMPTS,
  makeDeliver,
  makeFanOut,
} from '../../../lambdas/webhooks/deliver.ts';
import type { Delivery, WebhookRecord } from '../../../lambdas/webhooks/ports.ts';
import { DELIVERY_TIMEOUT_MS, type PostResult } from '../../../lambdas/webhooks/post.ts';
import { generateWebhookSecret, sealSecret } from '../../../lambdas/webhooks/secret.ts';
import { FIRST_RELEASE_TYPES } from '../../../lambdas/webhooks/subscription.ts';

const key = randomBytes(32);
const secret = generateWebhookSecret();
// Now: the receiver's verifier refuses a timestamp more than five minutes off its clock.
const NOW = new Date();

function webhook(overrides: Partial<WebhookRecord> = {}): WebhookRecord {
  return {
    id: 'w1',
    teamId: 't1',
    url: 'https://hooks.example.com/x',
    eventTypes: ['synthesis_run.failed'],
    description: null,
    createdAt: '2026-11-01T00:00:00.000Z',
    createdBy: 'u1',
    disabledAt: null,
    sealedSecret: sealSecret(secret, key),
    ...overrides,
  };
}

const event = newEvent(
  'synthesis_run.failed',
  {
    teamId: 't1',
    pipelineId: 'p1',
    runId: 'r1',
    status: 'failed',
    actor: { userId: 'system', credential: 'system' },
  },
  { at: new Date(NOW.getTime() - 1000).toISOString(), key: 'r1' },
);
const message: DeliveryMessage = { teamId: 't1', webhookId: 'w1', event };

function world(
  answer: PostResult,
  stored: WebhookRecord | null = webhook(),
  lane: DeliveryLane = 'fast',
  answeredAfterMs = 0,
) {
  const deliveries: Delivery[] = [];
  const posts: Array<{ headers: Record<string, string>; body: string; timeoutMs: number }> = [];
  const disabled: string[] = [];
  const marked: Array<string | null> = [];
  const movedAside: DeliveryMessage[] = [];
  let now = NOW.getTime();
  const deliver = makeDeliver({
    webhooks: {
      get: async () => stored,
      disable: async (_team, id) => {
        disabled.push(id);
      },
      markSlow: async (_team, _id, at) => {
        marked.push(at);
      },
      recordDelivery: async (delivery) => {
        deliveries.push(delivery);
      },
    },
    secretKey: async () => key,
    checkUrl: async (url) => ({ url: new URL(url), address: '8.8.8.8', family: 4 }),
    post: async (_target, headers, body, timeoutMs) => {
      posts.push({ headers, body, timeoutMs });
      now += answeredAfterMs;
      return answer;
    },
    clock: { now: () => new Date(now) },
    ids: { newId: () => `d${deliveries.length + 1}` },
    route:
      lane === 'fast'
        ? {
            lane,
            moveAside: async (moved) => {
              movedAside.push(moved);
            },
          }
        : { lane },
  });
  return { deliver, deliveries, posts, disabled, marked, movedAside };
}

describe('one delivery attempt', () => {
  it('delivers on a 2xx, signed so that standardwebhooks verifies it, the event id as webhook-id', async () => {
    const { deliver, deliveries, posts } = world({ status: 204 });
    expect(await deliver(message, 1)).toEqual({ outcome: 'delivered', status: 204 });
    const [post] = posts;
    expect(post?.headers['webhook-id']).toBe(event.id);
    expect(new Webhook(secret).verify(post?.body ?? '', post?.headers ?? {})).toEqual({
      type: event.type,
      timestamp: event.timestamp,
      data: event.data,
    });
    expect(deliveries).toEqual([
      expect.objectContaining({
        attempt: 1,
        status: 'delivered',
        responseStatus: 204,
        nextAttemptAt: null,
        eventId: event.id,
      }),
    ]);
  });

  it.each([
    [1, 5],
    [2, 300],
    [3, 1800],
    [4, 7200],
    [5, 18_000],
    [6, 36_000],
    [7, 36_000],
  ])(
    'retries failed attempt %i after %i s, recorded pending with its next time',
    async (attempt, seconds) => {
      const { deliver, deliveries } = world({ status: 500 });
      expect(await deliver(message, attempt)).toMatchObject({ outcome: 'retry', afterSeconds: seconds });
      expect(deliveries[0]).toMatchObject({
        attempt,
        status: 'pending',
        responseStatus: 500,
        nextAttemptAt: new Date(NOW.getTime() + seconds * 1000).toISOString(),
      });
    },
  );

  it('gives up after the last attempt: failed, no next time', async () => {
    const { deliver, deliveries } = world({ error: 'no answer within 10 s' });
    expect(MAX_ATTEMPTS).toBe(8);
    expect(await deliver(message, MAX_ATTEMPTS)).toMatchObject({ outcome: 'failed' });
    expect(deliveries[0]).toMatchObject({
      status: 'failed',
      responseStatus: null,
      nextAttemptAt: null,
      error: 'timeout: no answer in time',
    });
  });

  it.each([
    ['connect ECONNREFUSED 203.0.113.7:8443', 'connection refused'],
    ['getaddrinfo ENOTFOUND hooks.example.com', 'the host name did not resolve'],
    ['self-signed certificate in certificate chain', 'TLS failed'],
    ['Client network socket disconnected before secure TLS connection was established', 'TLS failed'],
    ['socket hang up', 'connection reset'],
    ['read ECONNRESET', 'connection reset'],
    ['connect EHOSTUNREACH 10.0.0.9:22', 'connection failed'],
  ])('records %j as the category %j, never the words of the network', async (raw, category) => {
    const { deliver, deliveries } = world({ error: raw });
    await deliver(message, 1);
    expect(deliveries[0]?.error).toBe(category);
    expect(deliveries[0]?.error).not.toMatch(/\d+\.\d+\.\d+\.\d+|:\d{2,5}\b|ENOTFOUND|certificate/);
  });

  it('disables the webhook on a 410 and does not retry', async () => {
    const { deliver, disabled } = world({ status: 410 });
    expect(await deliver(message, 1)).toEqual({ outcome: 'disabled' });
    expect(disabled).toEqual(['w1']);
  });

  it('sends nothing to a deleted or disabled webhook', async () => {
    for (const stored of [null, webhook({ disabledAt: NOW.toISOString() })]) {
      const { deliver, posts, deliveries } = world({ status: 200 }, stored);
      expect((await deliver(message, 1)).outcome).toBe('dropped');
      expect(posts).toEqual([]);
      expect(deliveries).toEqual([]);
    }
  });

  it('keeps the same webhook-id on every attempt', async () => {
    const { deliver, posts } = world({ status: 503 });
    await deliver(message, 1);
    await deliver(message, 2);
    expect(posts.map((post) => post.headers['webhook-id'])).toEqual([event.id, event.id]);
  });
});

describe('the fast and the slow lane', () => {
  const hung: PostResult = { error: `no answer within ${FAST_LANE_ANSWER_MS / 1000} s`, timedOut: true };

  it('gives a receiver the fast budget, then moves an unanswered delivery to the slow lane as the same attempt', async () => {
    const { deliver, deliveries, posts, marked, movedAside } = world(
      hung,
      webhook(),
      'fast',
      FAST_LANE_ANSWER_MS,
    );
    expect(await deliver(message, 2)).toMatchObject({ outcome: 'moved' });
    expect(posts.map((post) => post.timeoutMs)).toEqual([FAST_LANE_ANSWER_MS]);
    // Attempt 2 is made again in the slow lane: one attempt before it, not two.
    expect(movedAside).toEqual([{ ...message, attemptsBefore: 1 }]);
    expect(marked).toEqual([NOW.toISOString()]);
    // The slow lane records the attempt once it is made: the log has one row per attempt.
    expect(deliveries).toEqual([]);
  });

  it('sends a delivery of a receiver known to be slow to the slow lane without POSTing it', async () => {
    const slow = webhook({ slowSince: NOW.toISOString() });
    const { deliver, deliveries, posts, movedAside } = world({ status: 204 }, slow, 'fast');
    expect(await deliver(message, 1)).toMatchObject({ outcome: 'moved' });
    expect(posts).toEqual([]);
    expect(deliveries).toEqual([]);
    expect(movedAside).toEqual([{ ...message, attemptsBefore: 0 }]);
  });

  it('gives the slow lane the whole budget; a timeout there is a failed attempt, retried on schedule', async () => {
    const slow = webhook({ slowSince: NOW.toISOString() });
    const { deliver, deliveries, posts } = world(
      { error: 'no answer within 10 s', timedOut: true },
      slow,
      'slow',
    );
    expect(await deliver(message, 1)).toMatchObject({ outcome: 'retry', afterSeconds: 5 });
    expect(posts.map((post) => post.timeoutMs)).toEqual([DELIVERY_TIMEOUT_MS]);
    expect(deliveries[0]).toMatchObject({ status: 'pending', error: 'timeout: no answer in time' });
  });

  it('takes a slow receiver back to the fast lane once it answers well within the fast budget, not before', async () => {
    const slow = webhook({ slowSince: NOW.toISOString() });
    const quick = world({ status: 200 }, slow, 'slow', FAST_AGAIN_MS);
    const late = world({ status: 200 }, slow, 'slow', FAST_LANE_ANSWER_MS - 1);
    expect(await quick.deliver(message, 1)).toMatchObject({ outcome: 'delivered' });
    expect(await late.deliver(message, 1)).toMatchObject({ outcome: 'delivered' });
    expect(quick.marked).toEqual([null]);
    expect(late.marked).toEqual([]);
  });
});

describe('fan-out', () => {
  it("queues a slow receiver's delivery in the slow lane, the others' in the fast one", async () => {
    const lanes: Array<[string, DeliveryLane]> = [];
    const fanOut = makeFanOut({
      webhooks: {
        list: async () => [webhook({ id: 'quick' }), webhook({ id: 'slow', slowSince: NOW.toISOString() })],
      },
      enqueue: async (messages, lane) => {
        lanes.push(...messages.map((one): [string, DeliveryLane] => [one.webhookId, lane]));
      },
      publish: async () => undefined,
      nameActor: async (one) => one,
    });
    expect(await fanOut(event)).toBe(2);
    expect(lanes.sort()).toEqual([
      ['quick', 'fast'],
      ['slow', 'slow'],
    ]);
  });

  it('queues one delivery per enabled webhook subscribed to the type and created before the event, and publishes it', async () => {
    const queued: DeliveryMessage[] = [];
    const published: string[] = [];
    const fanOut = makeFanOut({
      webhooks: {
        list: async () => [
          webhook({ id: 'yes' }),
          webhook({ id: 'other-type', eventTypes: ['webhook.created'] }),
          webhook({ id: 'disabled', disabledAt: NOW.toISOString() }),
          webhook({ id: 'newer', createdAt: NOW.toISOString() }),
        ],
      },
      enqueue: async (messages) => {
        queued.push(...messages);
      },
      publish: async (events) => {
        published.push(...events.map((one) => one.id));
      },
      nameActor: async (one) => ({
        ...one,
        data: { ...one.data, actor: { ...one.data.actor, name: 'ada@example.com' } },
      }),
    });
    expect(await fanOut(event)).toBe(1);
    expect(queued.map((one) => one.webhookId)).toEqual(['yes']);
    // Receivers and the bus get the actor's name beside its ids.
    expect(queued[0]?.event.data.actor.name).toBe('ada@example.com');
    expect(published).toEqual([event.id]);
  });

  it('sends a type added after a webhook was created without a list to that webhook, not to one that chose its types', async () => {
    const queued: string[] = [];
    // The types a webhook made without a list was stored with before monitors (and members) existed.
    const firstRelease = FIRST_RELEASE_TYPES as WebhookRecord['eventTypes'];
    const fanOut = makeFanOut({
      webhooks: {
        list: async () => [
          webhook({ id: 'all', eventTypes: firstRelease, allEventTypes: true }),
          // Stored before the flag was kept: its list holds every type of the first release.
          webhook({ id: 'all-before-the-flag', eventTypes: firstRelease }),
          webhook({ id: 'chosen', eventTypes: firstRelease, allEventTypes: false }),
          webhook({ id: 'chosen-before-the-flag', eventTypes: firstRelease.slice(1) }),
        ],
      },
      enqueue: async (messages) => {
        queued.push(...messages.map((one) => one.webhookId));
      },
      publish: async () => {},
      nameActor: async (one) => one,
    });
    const alerted = newEvent(
      'monitor.alerted',
      { teamId: 't1', pipelineId: 'p1', actor: { userId: 'system', credential: 'system' } },
      { at: NOW.toISOString(), key: 'm1' },
    );
    expect(await fanOut(alerted)).toBe(2);
    expect(queued.sort()).toEqual(['all', 'all-before-the-flag']);
  });
});
