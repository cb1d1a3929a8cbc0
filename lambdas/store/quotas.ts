import { type DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { QuotaStore } from '../core/ports.ts';
import { isConditionFailure } from './conditions.ts';

/**
 * Usage counters in the data table: pk QUOTA#<key>#<window start>, sk QUOTA, one atomic ADD per
 * use conditioned on the count being under the limit, expired by TTL an hour after the window.
 */
export function makeQuotaStore(db: DynamoDBDocumentClient, tableName: string): QuotaStore {
  return {
    async consume(key, window, limit) {
      try {
        await db.send(
          new UpdateCommand({
            TableName: tableName,
            Key: { pk: `QUOTA#${key}#${window.start}`, sk: 'QUOTA' },
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
