/*
 * Usage counters in the data table, one per key and window: one atomic ADD per use conditioned on
 * the count being under the limit, expired by TTL an hour after the window.
 */
import { type DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { QuotaStore } from '../core/ports/runs.ts';
import { isConditionFailure } from './conditions.ts';
import { quotaKey } from './keys.ts';

export function makeQuotaStore(db: DynamoDBDocumentClient, tableName: string): QuotaStore {
  return {
    async consume(key, window, limit) {
      try {
        await db.send(
          new UpdateCommand({
            TableName: tableName,
            Key: quotaKey(key, window.start),
            UpdateExpression: 'ADD #count :one SET expiresAtEpoch = :expires',
            ConditionExpression: 'attribute_not_exists(#count) OR #count < :limit',
            ExpressionAttributeNames: { '#count': 'count' },
            ExpressionAttributeValues: {
              ':one': 1,
              ':limit': limit,
              ':expires': Math.ceil(Date.parse(window.end) / 1000) + 3600,
            },
          }),
        );
        return true;
      } catch (error) {
        if (isConditionFailure(error)) return false;
        throw error;
      }
    },
  };
}
