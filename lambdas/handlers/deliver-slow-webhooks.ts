/*
 * The slow lane's webhook deliverer (webhooks/delivery-batch.ts): the deliveries of receivers that
 * left a fast-lane POST unanswered, each POST given the whole DELIVERY_TIMEOUT_MS (10 s). A receiver
 * that answers within FAST_LANE_ANSWER_MS here goes back to the fast lane for its next deliveries.
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

const queue = deliveryQueueFromEnv('slow');

export const handler = makeDeliveryBatch({
  deliver: makeDeliver({
    webhooks: webhookRepositoryFromEnv(),
    secretKey: webhookSecretKeyFromEnv(),
    checkUrl: webhookUrlCheckFromEnv(),
    post: postToTarget,
    clock: systemClock,
    ids: nanoidGenerator,
    route: { lane: 'slow' },
  }),
  hide: queue.hide,
});
