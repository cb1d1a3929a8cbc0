/*
 * A team's model spend per calendar month in the data table (one item per team and month, keys:
 * store/keys.ts): the DynamoDB adapter of ModelSpendStore. DynamoDB adds numbers as decimals, so
 * the sums of micro-dollar amounts stay exact.
 */
import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { ModelSpendStore } from '../core/model-budget.ts';
import { isConditionFailure } from './conditions.ts';
import { modelSpendKey } from './keys.ts';

/** A month's item is kept this long after the month began (TTL): long enough to read a year back. */
const KEEP_SECONDS = 400 * 86_400;

const expiry = (month: string) => Math.ceil(Date.parse(`${month}-01T00:00:00Z`) / 1000) + KEEP_SECONDS;

export function makeModelSpendStore(db: DynamoDBDocumentClient, tableName: string): ModelSpendStore {
  const micro = (usd: number) => Math.round(usd * 1_000_000) / 1_000_000;
  const add = (teamId: string, month: string, usd: number, budgetUsd: number | null) =>
    db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: modelSpendKey(teamId, month),
        UpdateExpression: 'ADD usd :usd SET teamId = :team, expiresAtEpoch = :expires',
        ExpressionAttributeValues: {
          ':usd': micro(usd),
          ':team': teamId,
          ':expires': expiry(month),
          ...(budgetUsd === null ? {} : { ':room': micro(budgetUsd - usd) }),
        },
        // The budget holds when what is spent plus this run's estimate stays within it.
        ...(budgetUsd === null ? {} : { ConditionExpression: 'attribute_not_exists(usd) OR usd <= :room' }),
      }),
    );
  return {
    async reserve(teamId, month, usd, budgetUsd) {
      if (budgetUsd !== null && usd > budgetUsd) return false;
      try {
        await add(teamId, month, usd, budgetUsd);
        return true;
      } catch (error) {
        if (isConditionFailure(error)) return false;
        throw error;
      }
    },
    async adjust(teamId, month, usd) {
      if (usd !== 0) await add(teamId, month, usd, null);
    },
    async spent(teamId, month) {
      const { Item } = await db.send(
        new GetCommand({ TableName: tableName, Key: modelSpendKey(teamId, month), ConsistentRead: true }),
      );
      const usd = Item?.usd;
      return typeof usd === 'number' ? Math.max(0, usd) : 0;
    },
  };
}
