/*
 * Webhooks and their deliveries in the data table (keys: store/keys.ts): the DynamoDB adapter of
 * WebhookRepository. Creating and deleting write their event in the same transaction.
 */
import {
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { NotFoundError } from '../core/errors.ts';
import type { PageRequest } from '../core/ports/common.ts';
import {
  type Delivery,
  deliverySchema,
  type WebhookRepository,
  webhookRecordSchema,
} from '../webhooks/ports.ts';
import { isConditionFailure, putNew } from './conditions.ts';
import { capReached, countDown, countUp, sendCounted } from './counted.ts';
import { eventPut } from './events.ts';
import { itemReader, parseItem } from './items.ts';
import {
  deliveryKey,
  teamWebhooksPartition,
  WEBHOOK_PREFIX,
  webhookCountKey,
  webhookDeliveriesPartition,
  webhookKey,
} from './keys.ts';
import { queryPage } from './query-page.ts';

/** Deliveries are kept this long, then TTL removes them: a webhook's log shows its last month. */
export const DELIVERY_RETENTION_DAYS = 30;

/** The tables of the repository: the data table, and the outbox the changes write their events to. */
interface WebhookTables {
  dataTable: string;
  eventsTable: string | undefined;
}

function eventsTableOf(tables: WebhookTables): string {
  if (!tables.eventsTable) throw new Error('The webhook repository was built without the events table.');
  return tables.eventsTable;
}

/** DynamoDB adapter of WebhookRepository. */
export function makeWebhookRepository(
  db: DynamoDBDocumentClient,
  dataTable: string,
  eventsTable?: string,
): WebhookRepository {
  const tables: WebhookTables = { dataTable, eventsTable };
  return {
    ...makeWebhookChanges(db, tables),
    ...makeWebhookStates(db, dataTable),
    ...makeWebhookReads(db, dataTable),
  };
}

/** Creating and deleting a webhook (each with its event, counted against the team's limit). */
function makeWebhookChanges(
  db: DynamoDBDocumentClient,
  tables: WebhookTables,
): Pick<WebhookRepository, 'create' | 'remove'> {
  const { dataTable } = tables;
  return {
    async create(webhook, event, maxPerTeam) {
      await sendCounted(
        db,
        [
          countUp(dataTable, webhookCountKey(webhook.teamId), 'webhookCount', maxPerTeam),
          putNew(dataTable, { ...webhookKey(webhook.teamId, webhook.id), ...webhook }),
          eventPut(eventsTableOf(tables), event),
        ],
        capReached(`A team has at most ${maxPerTeam} webhooks; delete one you no longer need first.`),
      );
    },

    async remove(teamId, webhookId, event) {
      await sendCounted(
        db,
        [
          {
            Delete: {
              TableName: dataTable,
              Key: webhookKey(teamId, webhookId),
              ConditionExpression: 'attribute_exists(pk)',
            },
          },
          countDown(dataTable, webhookCountKey(teamId), 'webhookCount'),
          eventPut(eventsTableOf(tables), event),
        ],
        (cause) => new NotFoundError(`Webhook ${webhookId} does not exist.`, { cause }),
      );
    },
  };
}

/** A webhook's states that deliveries set: disabled by a 410, slow (or no longer) in the fast lane. */
function makeWebhookStates(
  db: DynamoDBDocumentClient,
  dataTable: string,
): Pick<WebhookRepository, 'disable' | 'markSlow'> {
  return {
    async disable(teamId, webhookId, at) {
      try {
        await db.send(
          new UpdateCommand({
            TableName: dataTable,
            Key: webhookKey(teamId, webhookId),
            UpdateExpression: 'SET disabledAt = :at',
            ConditionExpression:
              'attribute_exists(pk) AND (attribute_not_exists(disabledAt) OR disabledAt = :null)',
            ExpressionAttributeValues: { ':at': at, ':null': null },
          }),
        );
      } catch (error) {
        // Deleted meanwhile, or already disabled: nothing to do.
        if (!isConditionFailure(error)) throw error;
      }
    },

    async markSlow(teamId, webhookId, at) {
      try {
        await db.send(
          new UpdateCommand({
            TableName: dataTable,
            Key: webhookKey(teamId, webhookId),
            UpdateExpression: 'SET slowSince = :at',
            ConditionExpression: 'attribute_exists(pk)',
            ExpressionAttributeValues: { ':at': at },
          }),
        );
      } catch (error) {
        // Deleted meanwhile: nothing to mark.
        if (!isConditionFailure(error)) throw error;
      }
    },
  };
}

/** A team's webhooks, one of them, and a webhook's deliveries (recorded, and listed a page at a time). */
function makeWebhookReads(
  db: DynamoDBDocumentClient,
  dataTable: string,
): Pick<WebhookRepository, 'list' | 'get' | 'recordDelivery' | 'listDeliveries'> {
  const readWebhook = itemReader(webhookRecordSchema, 'webhook');
  return {
    async list(teamId) {
      const { Items = [] } = await db.send(
        new QueryCommand({
          TableName: dataTable,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
          ExpressionAttributeValues: { ':pk': teamWebhooksPartition(teamId), ':prefix': WEBHOOK_PREFIX },
          ConsistentRead: true,
        }),
      );
      return Items.map(readWebhook).sort((a, b) => b.createdAt.localeCompare(a.createdAt));
    },

    async get(teamId, webhookId) {
      const { Item } = await db.send(
        new GetCommand({ TableName: dataTable, Key: webhookKey(teamId, webhookId), ConsistentRead: true }),
      );
      return Item ? parseItem(webhookRecordSchema, Item, 'webhook') : null;
    },

    async recordDelivery(delivery: Delivery) {
      await db.send(
        new PutCommand({
          TableName: dataTable,
          Item: {
            ...deliveryKey(delivery),
            ...delivery,
            expiresAtEpoch:
              Math.ceil(Date.parse(delivery.attemptedAt) / 1000) + DELIVERY_RETENTION_DAYS * 86_400,
          },
        }),
      );
    },

    listDeliveries(webhookId: string, page: PageRequest) {
      return queryPage(
        db,
        {
          tableName: dataTable,
          partition: { name: 'pk', value: webhookDeliveriesPartition(webhookId) },
          cursorAttributes: ['pk', 'sk'],
        },
        page,
        itemReader(deliverySchema, 'webhook delivery'),
      );
    },
  };
}
