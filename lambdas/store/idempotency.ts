/*
 * Idempotency keys of POST …/synthesize in the data table, with a DynamoDB TTL: the adapter of
 * IdempotencyStore. A key is first reserved for seconds, then kept 24 h once its run exists.
 */
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/mini';
import type { IdempotencyRecord, IdempotencyStore } from '../core/ports/runs.ts';
import { isConditionFailure } from './conditions.ts';
import { parseItem } from './items.ts';
import { idempotencyIndexKey, idempotencyKey } from './keys.ts';

/** DynamoDB adapter of IdempotencyStore. */
export function makeIdempotencyStore(db: DynamoDBDocumentClient, tableName: string): IdempotencyStore {
  // Built here, not at module level, so that only the Lambdas that use the store bundle it.
  const recordSchema: z.ZodMiniType<IdempotencyRecord> = z.object({
    requestHash: z.string(),
    runId: z.string(),
    expiresAt: z.string(),
    pipelineId: z.optional(z.string()),
  });
  // TTL deletes lazily, so expiry is also checked on every read and write (`expiresAt`).
  return {
    async find(scope, clientKey) {
      const { Item } = await db.send(
        new GetCommand({ TableName: tableName, Key: idempotencyKey(scope, clientKey), ConsistentRead: true }),
      );
      return Item ? parseItem(recordSchema, Item, 'idempotency key') : null;
    },

    async reserve(scope, clientKey, record, now) {
      try {
        await db.send(
          new PutCommand({
            TableName: tableName,
            Item: {
              ...idempotencyKey(scope, clientKey),
              // In its pipeline's gsi1 partition, so that deleting the pipeline finds its keys.
              ...(record.pipelineId
                ? idempotencyIndexKey(record.pipelineId, idempotencyKey(scope, clientKey))
                : {}),
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

    async confirm(scope, clientKey, runId, expiresAt) {
      // Only the reservation this request made: if it lapsed and another request took the key,
      // that request's reservation stands.
      try {
        await db.send(
          new UpdateCommand({
            TableName: tableName,
            Key: idempotencyKey(scope, clientKey),
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

    async release(scope, clientKey) {
      await db.send(new DeleteCommand({ TableName: tableName, Key: idempotencyKey(scope, clientKey) }));
    },
  };
}
