/*
 * Webhook deliveries are shared fairly between teams: the real sender (the team as message group)
 * into the local queue (which implements SQS fair queues), consumed with the webhook deliverer's
 * own trigger settings. One team's receivers that hang keep its own backlog waiting, never another
 * team's delivery: that one is handed out as soon as an invocation is free. Order only; the time
 * it takes is the `webhooks` bench's.
 */
import type { SQSEvent } from 'aws-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import { WEBHOOK_DELIVERER } from '../../../lambdas/functions.ts';
import { workQueueNamed } from '../../../lambdas/queues.ts';
import type { DeliveryMessage } from '../../../lambdas/webhooks/deliver.ts';
import { deliveryQueueFromEnv } from '../../../lambdas/wiring/webhooks.ts';
import { startSqsEndpoint } from '../../../local/queue/endpoint.ts';
import { startEventSource } from '../../../local/queue/event-source.ts';
import { LocalQueue } from '../../../local/queue/queue.ts';
import { waitFor } from '../../support/wait.ts';

const cleanups: Array<() => Promise<void>> = [];
const saved = { ...process.env };
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
  process.env = { ...saved };
});

/**
 * How long one invocation of the busy team's hung receivers lasts here (their POSTs time out): long
 * enough that sending the other team's delivery, slow on a loaded machine, ends well within it.
 */
const HANG_MS = 3_000;

const delivery = (teamId: string, webhookId: string, eventId: string) =>
  ({ teamId, webhookId, event: { id: eventId } }) as unknown as DeliveryMessage;

describe('webhook deliveries between teams', () => {
  it("hand another team's delivery out before one team's backlog of hung receivers", async () => {
    const row = workQueueNamed('webhook-deliveries');
    const queue = new LocalQueue({ name: row.name, visibilityTimeoutMs: 60_000 });
    const sqs = await startSqsEndpoint({ [row.name]: queue });
    cleanups.push(() => sqs.stop());
    Object.assign(process.env, {
      AWS_ENDPOINT_URL_SQS: sqs.endpoint,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      WEBHOOK_QUEUE_URL: sqs.queueUrl(row.name),
    });
    const handedOut: string[] = [];
    const { batchSize, maxConcurrency } = WEBHOOK_DELIVERER.trigger;
    const consumer = startEventSource(
      queue,
      async (event: SQSEvent) => {
        const teams = event.Records.map((record) => (JSON.parse(record.body) as DeliveryMessage).teamId);
        handedOut.push(...teams);
        // Every POST of a batch runs at once: a batch with the busy team's lasts as long as they hang.
        if (teams.includes('team-busy')) await new Promise((resolve) => setTimeout(resolve, HANG_MS));
        return { batchItemFailures: [] };
      },
      {
        batchSize,
        maxConcurrency,
        pollIntervalMs: 20,
        functionName: 'deliver-webhooks',
        log: () => undefined,
      },
    );
    cleanups.push(() => consumer.stop());
    const sender = deliveryQueueFromEnv();

    // Settings changes of a team with 16 receivers that hang: more deliveries than the deliverer
    // holds at once (its invocations × their batch), so a backlog waits behind the hung ones.
    const capacity = batchSize * maxConcurrency;
    const changes = Math.ceil((capacity * 1.5) / 16);
    for (let change = 0; change < changes; change++) {
      await sender.enqueue(
        Array.from({ length: 16 }, (_, hook) => delivery('team-busy', `wh-${hook}`, `evt-${change}`)),
      );
    }
    await waitFor(() => handedOut.length >= capacity, 'the first invocations');
    const handedOutBefore = handedOut.length;
    await sender.enqueue([delivery('team-quiet', 'wh-quiet', 'evt-quiet')]);
    await waitFor(() => handedOut.includes('team-quiet'), "the other team's delivery", 30_000);

    // It goes in one of the first batches once invocations are free (batches started while it was
    // being sent may go first), ahead of the busy team's backlog.
    const busyAfterItWasSent = handedOut.indexOf('team-quiet') - handedOutBefore;
    expect(busyAfterItWasSent).toBeLessThan(capacity);
    expect(changes * 16 - handedOut.indexOf('team-quiet')).toBeGreaterThan(capacity / 4);
  });
});
