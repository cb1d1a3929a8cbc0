/*
 * Login and magic-link throttling in the auth table: one counter per key in a fixed window that
 * starts with the first attempt; the attempts part of AuthRepository.
 */
import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/mini';
import type { AuthRepository } from '../../auth/ports.ts';
import { isConditionFailure } from '../conditions.ts';
import { type AuthTable, epochSeconds, getItem } from './auth-table.ts';
import { attemptsKey } from './keys.ts';

export type AttemptStore = Pick<AuthRepository, 'reserveAttempt' | 'clearAttempts'>;

/** DynamoDB adapter of the attempts part of AuthRepository. */
export function makeAttemptStore(table: AuthTable): AttemptStore {
  const { db, tableName } = table;
  const windowSchema = z.object({ windowStartedAt: z.string() });
  return {
    async reserveAttempt(key, { limit, windowMs }, now) {
      const nowIso = now.toISOString();
      const windowFloor = new Date(now.getTime() - windowMs).toISOString();
      const Key = attemptsKey(key);
      const ttl = epochSeconds(nowIso, windowMs);
      // Two rounds: a concurrent caller may start the new window between our two writes.
      for (let round = 0; round < 2; round++) {
        try {
          await db.send(
            new UpdateCommand({
              TableName: tableName,
              Key,
              UpdateExpression:
                'SET attempts = if_not_exists(attempts, :zero) + :one, windowStartedAt = if_not_exists(windowStartedAt, :now), expiresAtEpoch = if_not_exists(expiresAtEpoch, :ttl)',
              ConditionExpression:
                'attribute_not_exists(pk) OR (windowStartedAt > :floor AND attempts < :limit)',
              ExpressionAttributeValues: {
                ':zero': 0,
                ':one': 1,
                ':now': nowIso,
                ':ttl': ttl,
                ':floor': windowFloor,
                ':limit': limit,
              },
            }),
          );
          return { allowed: true };
        } catch (error) {
          if (!isConditionFailure(error)) throw error;
        }
        // Either the window is over (start a new one) or its limit is reached (refuse until it ends).
        try {
          await db.send(
            new PutCommand({
              TableName: tableName,
              Item: { ...Key, attempts: 1, windowStartedAt: nowIso, expiresAtEpoch: ttl },
              ConditionExpression: 'attribute_not_exists(pk) OR windowStartedAt <= :floor',
              ExpressionAttributeValues: { ':floor': windowFloor },
            }),
          );
          return { allowed: true };
        } catch (error) {
          if (!isConditionFailure(error)) throw error;
        }
      }
      const window = await getItem(table, Key, windowSchema, 'attempt window');
      const startedAt = window ? Date.parse(window.windowStartedAt) : now.getTime();
      return { allowed: false, retryAt: new Date(startedAt + windowMs) };
    },

    async clearAttempts(key) {
      await db.send(new DeleteCommand({ TableName: tableName, Key: attemptsKey(key) }));
    },
  };
}
