/*
 * Composition of the webhook functions: the key that seals webhook secrets (Secrets Manager on AWS,
 * WEBHOOK_SECRET_KEY in the local stack and the tests), the URL policy (local http only where
 * local/ sets ALLOW_LOCAL_WEBHOOK_URLS), the webhook store, the delivery queue and the event bus.
 */
import { createHash } from 'node:crypto';
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { ChangeMessageVisibilityCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import * as z from 'zod/mini';
import type { DomainEvent } from '../core/events.ts';
import { getSqsClient } from '../sqs/sqs-queue.ts';
import { makeAuditLog } from '../store/events.ts';
import { makeWebhookRepository } from '../store/webhooks.ts';
import type { DeliveryLane, DeliveryMessage } from '../webhooks/deliver.ts';
import type { SecretKeyProvider } from '../webhooks/ports.ts';
import { checkWebhookUrl } from '../webhooks/url-guard.ts';
import { getDocumentClient } from './aws.ts';
import { readConfig, tableName } from './config.ts';
import { getSecretsManagerClient, makeSecretCache } from './secrets.ts';

const inLambda = (env: NodeJS.ProcessEnv) => env.AWS_EXECUTION_ENV?.startsWith('AWS_Lambda') ?? false;

/** The secret's text, whatever it is, made into the 32-byte AES-256 key by SHA-256. */
const toKey = (value: string) => createHash('sha256').update(value, 'utf8').digest();

/**
 * The key that seals webhook secrets: read lazily from Secrets Manager (WEBHOOK_SECRET_KEY_ARN)
 * once per container, or WEBHOOK_SECRET_KEY (the local stack and tests; refused inside Lambda).
 */
export function webhookSecretKeyFromEnv(env: NodeJS.ProcessEnv = process.env): SecretKeyProvider {
  let key: Promise<Buffer> | undefined;
  return () => {
    key ??= (async () => {
      if (env.WEBHOOK_SECRET_KEY_ARN) {
        return toKey(await makeSecretCache(getSecretsManagerClient(), env.WEBHOOK_SECRET_KEY_ARN).get());
      }
      if (env.WEBHOOK_SECRET_KEY && !inLambda(env)) return toKey(env.WEBHOOK_SECRET_KEY);
      throw new Error(
        'No webhook secret key: set WEBHOOK_SECRET_KEY_ARN (AWS) or WEBHOOK_SECRET_KEY (local stack, tests).',
      );
    })();
    // A failed read is not kept: the next call tries again.
    key.catch(() => {
      key = undefined;
    });
    return key;
  };
}

/** The URL check with this stack's policy: local http only where local/ allows it, never in Lambda. */
export function webhookUrlCheckFromEnv(env: NodeJS.ProcessEnv = process.env) {
  const allowLocalHttp = env.ALLOW_LOCAL_WEBHOOK_URLS === 'true' && !inLambda(env);
  return (url: string) => checkWebhookUrl(url, { allowLocalHttp });
}

export function webhookRepositoryFromEnv() {
  const config = readConfig({ DATA_TABLE: tableName, EVENTS_TABLE: z.optional(tableName) });
  return makeWebhookRepository(getDocumentClient(), config.DATA_TABLE, config.EVENTS_TABLE);
}

/** The variable of each lane's queue URL (lambdas/queues.ts). */
const LANE_URL_VARIABLES = { fast: 'WEBHOOK_QUEUE_URL', slow: 'WEBHOOK_SLOW_QUEUE_URL' } as const;

/** A lane's webhook delivery queue: sending deliveries, hiding a failed one until its next attempt. */
export function deliveryQueueFromEnv(lane: DeliveryLane = 'fast') {
  const variable = LANE_URL_VARIABLES[lane];
  const url = readConfig({ [variable]: z.string() })[variable] as string;
  const client = getSqsClient();
  return {
    url,
    async enqueue(messages: DeliveryMessage[]) {
      // One SendMessage each (at most 20 a team), in parallel; the team is the message group (a fair queue).
      await Promise.all(
        messages.map((message) =>
          client.send(
            new SendMessageCommand({
              QueueUrl: url,
              MessageBody: JSON.stringify(message),
              MessageGroupId: message.teamId,
            }),
          ),
        ),
      );
    },
    async hide(receiptHandle: string, seconds: number) {
      await client.send(
        new ChangeMessageVisibilityCommand({
          QueueUrl: url,
          ReceiptHandle: receiptHandle,
          VisibilityTimeout: seconds,
        }),
      );
    },
  };
}

/** Both lanes' queues, for the fan-out: a delivery goes to its webhook's lane. */
export function deliveryLanesFromEnv() {
  const lanes = { fast: deliveryQueueFromEnv('fast'), slow: deliveryQueueFromEnv('slow') };
  return (messages: DeliveryMessage[], lane: DeliveryLane) => lanes[lane].enqueue(messages);
}

/** The source every event carries on the bus. */
export const EVENT_SOURCE = 'pipeline-synthesis';

/** Where there is no bus (the local stack has no EventBridge), events are put nowhere. */
export const NO_EVENT_BUS = async (_events: DomainEvent[]): Promise<void> => {};

/** Puts events on the stack's custom bus (EVENT_BUS_NAME); NO_EVENT_BUS where there is none. */
export function eventBusFromEnv(env: NodeJS.ProcessEnv = process.env) {
  const busName = env.EVENT_BUS_NAME;
  if (!busName) return NO_EVENT_BUS;
  const client = new EventBridgeClient({});
  return async (events: DomainEvent[]) => {
    const { FailedEntryCount = 0 } = await client.send(
      new PutEventsCommand({
        Entries: events.map((event) => ({
          EventBusName: busName,
          Source: EVENT_SOURCE,
          DetailType: event.type,
          Time: new Date(event.timestamp),
          Detail: JSON.stringify(event),
        })),
      }),
    );
    if (FailedEntryCount > 0) throw new Error(`The event bus refused ${FailedEntryCount} events.`);
  };
}

export function auditLogFromEnv() {
  return makeAuditLog(getDocumentClient(), readConfig({ EVENTS_TABLE: tableName }).EVENTS_TABLE);
}
