import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import type { IdempotencyStore } from '../core/ports.ts';
import { isConditionFailure } from './conditions.ts';

/*
 * Idempotency keys live in the data table: pk IDEMPOTENCY#<scope>#<key>, sk IDEMPOTENCY, with a
 * DynamoDB TTL (expiresAtEpoch). TTL deletes lazily, so expiry is also checked on every read/write.
 * A key is first reserved for seconds (its request may die before the run exists), then kept 24 h.
 */
function key(scope: string, idempotencyKey: string) {
  return { pk: `IDEMPOTENCY#${scope}#${idempotencyKey}`, sk: 'IDEMPOTENCY' };
}

/** DynamoDB adapter of IdempotencyStore. */
export function makeIdempotencyStore(db: DynamoDBDocumentClient, tableName: string): IdempotencyStore {
  return {
    async find(scope, idempotencyKey) {
      const { Item } = await db.send(
        new GetCommand({ TableName: tableName, Key: key(scope, idempotencyKey), ConsistentRead: true }),
      );
      if (!Item) return null;
      return {
        requestHash: String(Item.requestHash),
        runId: String(Item.runId),
        expiresAt: String(Item.expiresAt),
      };
    },

    async reserve(scope, idempotencyKey, record, now) {
      try {
        await db.send(
          new PutCommand({
            TableName: tableName,
            Item: {
              ...key(scope, idempotencyKey),
              ...record,
              expiresAtEpoch: Math.ceil(Date.parse(record.expiresAt) / 1000),
            },
            ConditionExpression: 'attribute_not_exists(pk) OR expiresAt <= :now',
            ExpressionAttributeValues: { ':now': now },
          }),
        );
        return true;
      } catch (error) {
        if (isConditionFailure(error)) return false;
        throw error;
      }
    },

    async confirm(scope, idempotencyKey, runId, expiresAt) {
      // Only the reservation this request made: if it lapsed and another request took the key,
      // that request's reservation stands.
      try {
        await db.send(
          new UpdateCommand({
            TableName: tableName,
            Key: key(scope, idempotencyKey),
            UpdateExpression: 'SET expiresAt = :expiresAt, expiresAtEpoch = :epoch',
            ConditionExpression: 'runId = :runId',
            ExpressionAttributeValues: {
              ':expiresAt': expiresAt,
              ':epoch': Math.ceil(Date.parse(expiresAt) / 1000),
              ':runId': runId,
            },
          }),
        );
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
      }
    },

    async release(scope, idempotencyKey) {
      await db.send(new DeleteCommand({ TableName: tableName, Key: key(scope, idempotencyKey) }));
    },
  };
}
