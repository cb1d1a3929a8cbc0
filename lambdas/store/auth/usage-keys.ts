/*
 * Teams' usage keys (auth/usage-keys.ts) on the team items of the auth table: `usageKeyId` and
 * `usageKeyValue`, written once and read by the authorizer, and `usageKeyPlanId`, the plan the key
 * was last put on. No reader of a team for an answer sees
 * them: the team's schema (accounts.ts) drops every attribute it does not name.
 */
import { GetCommand, ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/mini';
import type { KeptUsageKey, TeamUsageKeyStore } from '../../auth/ports.ts';
import { NotFoundError } from '../../core/errors.ts';
import { isConditionFailure } from '../conditions.ts';
import { parseItem } from '../items.ts';
import type { AuthTable } from './auth-table.ts';
import { teamKey } from './keys.ts';

const TEAM_SORT_KEY = teamKey('').sk;
/** The attributes a team's usage key is kept in: all that keepTeamUsageKey writes (its IAM grant names them). */
export const USAGE_KEY_ATTRIBUTES = ['usageKeyId', 'usageKeyValue', 'usageKeyPlanId'] as const;
/** Team items a backfill page reads at most (a Scan's Limit counts the items read, before the filter). */
const SCAN_PAGE_ITEMS = 1_000;

/** DynamoDB adapter of TeamUsageKeyStore. */
export function makeTeamUsageKeyStore({ db, tableName }: AuthTable): TeamUsageKeyStore {
  const keySchema = z.object({
    usageKeyId: z.optional(z.string()),
    usageKeyValue: z.optional(z.string()),
    usageKeyPlanId: z.optional(z.string()),
  });
  const startKeySchema = z.object({ pk: z.string(), sk: z.string() });
  const teamIdSchema = z.object({ teamId: z.string() });

  async function read(teamId: string) {
    const { Item } = await db.send(
      new GetCommand({
        TableName: tableName,
        Key: teamKey(teamId),
        ProjectionExpression: 'usageKeyId, usageKeyValue, usageKeyPlanId',
        // The key is written once and never changes: an eventually consistent read is enough.
      }),
    );
    return Item ? parseItem(keySchema, Item, 'team usage key') : null;
  }
  const keyOf = (item: Awaited<ReturnType<typeof read>>): KeptUsageKey | null =>
    item?.usageKeyId && item.usageKeyValue
      ? { keyId: item.usageKeyId, value: item.usageKeyValue, planId: item.usageKeyPlanId ?? null }
      : null;

  return {
    getTeamUsageKey: async (teamId) => keyOf(await read(teamId)),

    async keepTeamUsageKey(teamId, key, planId) {
      try {
        await db.send(
          new UpdateCommand({
            TableName: tableName,
            Key: teamKey(teamId),
            UpdateExpression: 'SET usageKeyId = :id, usageKeyValue = :value, usageKeyPlanId = :plan',
            ConditionExpression:
              'attribute_exists(pk) AND (attribute_not_exists(usageKeyId) OR usageKeyId = :id)',
            ExpressionAttributeValues: { ':id': key.keyId, ':value': key.value, ':plan': planId },
          }),
        );
        return key;
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
        const kept = keyOf(await read(teamId));
        if (kept) return { keyId: kept.keyId, value: kept.value };
        throw new NotFoundError(`Team ${teamId} does not exist.`, { cause: error });
      }
    },

    async listTeamsWithoutUsageKey(planId, cursor) {
      const { Items = [], LastEvaluatedKey } = await db.send(
        new ScanCommand({
          TableName: tableName,
          FilterExpression:
            'sk = :team AND (attribute_not_exists(usageKeyPlanId) OR usageKeyPlanId <> :plan)',
          ExpressionAttributeValues: { ':team': TEAM_SORT_KEY, ':plan': planId },
          ProjectionExpression: 'teamId',
          Limit: SCAN_PAGE_ITEMS,
          ...(cursor === undefined
            ? {}
            : { ExclusiveStartKey: parseItem(startKeySchema, JSON.parse(cursor), 'backfill cursor') }),
        }),
      );
      return {
        teamIds: Items.map((item) => parseItem(teamIdSchema, item, 'team').teamId),
        ...(LastEvaluatedKey ? { cursor: JSON.stringify(LastEvaluatedKey) } : {}),
      };
    },
  };
}
