/*
 * The fast lane's webhook deliverer (webhooks/delivery-batch.ts): each receiver gets
 * FAST_LANE_ANSWER_MS to answer; one that does not, or is already known to be slow, has its
 * delivery moved to the slow lane's queue (deliver-slow-webhooks), so hung receivers never hold
 * another team's delivery for longer than that.
 */
import { makeDeliver } from '../webhooks/deliver.ts';
import { makeDeliveryBatch } from '../webhooks/delivery-batch.ts';
import { postToTarget } from '../webhooks/post.ts';
import { nanoidGenerator, systemClock } from '../wiring/clock.ts';
import {
  deliveryQueueFromEnv,
  webhookRepositoryFromEnv,
  webhookSecretKeyFromEnv,
  webhookUrlCheckFromEnv,
} from '../wiring/webhooks.ts';

const queue = deliveryQueueFromEnv('fast');
const slowLane = deliveryQueueFromEnv('slow');

export const handler = makeDeliveryBatch({
  deliver: makeDeliver({
    webhooks: webhookRepositoryFromEnv(),
    secretKey: webhookSecretKeyFromEnv(),
    checkUrl: webhookUrlCheckFromEnv(),
    post: postToTarget,
    clock: systemClock,
    ids: nanoidGenerator,
    route: { lane: 'fast', moveAside: (message) => slowLane.enqueue([message]) },
  }),
  hide: queue.hide,
});
