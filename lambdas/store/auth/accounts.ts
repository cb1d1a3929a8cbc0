/*
 * Teams, users (with the email index that keeps addresses unique) and memberships in the auth
 * table: the accounts part of AuthRepository.
 */
import {
  BatchGetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/mini';
import { normalizeEmail } from '../../auth/email-address.ts';
import type { AuthRepository, Membership, Team, User } from '../../auth/ports.ts';
import { ConflictError } from '../../core/errors.ts';
import { roleSchema } from '../../core/principal.ts';
import { failedTransactionItems } from '../conditions.ts';
import { itemReader } from '../items.ts';
import { authKeys } from '../keys.ts';
import { type AuthTable, getItem } from './auth-table.ts';

export type AccountStore = Pick<
  AuthRepository,
  | 'createTeam'
  | 'createUser'
  | 'getUser'
  | 'findUserByEmail'
  | 'setPasswordHash'
  | 'putMembership'
  | 'getMembership'
  | 'listTeamsOfUser'
>;

const teamSchema: z.ZodMiniType<Team> = z.object({
  teamId: z.string(),
  name: z.string(),
  createdAt: z.string(),
});
const userSchema: z.ZodMiniType<User> = z.object({
  userId: z.string(),
  email: z.string(),
  name: z.string(),
  createdAt: z.string(),
  passwordHash: z.optional(z.string()),
});
/** The email item: which user holds the address. */
const emailSchema = z.object({ userId: z.string() });
const membershipSchema: z.ZodMiniType<Membership> = z.object({
  userId: z.string(),
  teamId: z.string(),
  role: roleSchema,
  createdAt: z.string(),
});
const readMembership = itemReader(membershipSchema, 'membership');
const readTeam = itemReader(teamSchema, 'team');

/** DynamoDB adapter of the accounts part of AuthRepository. */
export function makeAccountStore(table: AuthTable): AccountStore {
  const { db, tableName } = table;
  const getUser = (userId: string) => getItem(table, authKeys.user(userId), userSchema, 'user');

  return {
    async createTeam(team) {
      await db.send(
        new PutCommand({
          TableName: tableName,
          Item: { ...authKeys.team(team.teamId), ...team },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
    },

    async createUser(user) {
      const email = normalizeEmail(user.email);
      try {
        await db.send(
          new TransactWriteCommand({
            TransactItems: [
              {
                Put: {
                  TableName: tableName,
                  Item: { ...authKeys.email(email), userId: user.userId },
                  ConditionExpression: 'attribute_not_exists(pk)',
                },
              },
              {
                Put: {
                  TableName: tableName,
                  Item: { ...authKeys.user(user.userId), ...user, email },
                  ConditionExpression: 'attribute_not_exists(pk)',
                },
              },
            ],
          }),
        );
      } catch (error) {
        if (failedTransactionItems(error).includes(0))
          throw new ConflictError('A user with this email already exists.');
        throw error;
      }
    },

    getUser,

    async findUserByEmail(email) {
      const entry = await getItem(table, authKeys.email(normalizeEmail(email)), emailSchema, 'email entry');
      return entry ? getUser(entry.userId) : null;
    },

    async setPasswordHash(userId, passwordHash) {
      await db.send(
        new UpdateCommand({
          TableName: tableName,
          Key: authKeys.user(userId),
          UpdateExpression: 'SET passwordHash = :hash',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':hash': passwordHash },
        }),
      );
    },

    async putMembership(membership) {
      await db.send(
        new PutCommand({
          TableName: tableName,
          Item: {
            ...authKeys.membership(membership.userId, membership.teamId),
            ...authKeys.membershipIndex(membership),
            ...membership,
          },
        }),
      );
    },

    getMembership: (userId, teamId) =>
      getItem(table, authKeys.membership(userId, teamId), membershipSchema, 'membership'),

    async listTeamsOfUser(userId) {
      const { Items = [] } = await db.send(
        new QueryCommand({
          TableName: tableName,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :team)',
          ExpressionAttributeValues: {
            ':pk': authKeys.userPartition(userId),
            ':team': authKeys.membershipPrefix,
          },
          ConsistentRead: true,
          Limit: 100,
        }),
      );
      const memberships = Items.map(readMembership);
      if (memberships.length === 0) return [];
      const { Responses = {} } = await db.send(
        new BatchGetCommand({
          RequestItems: { [tableName]: { Keys: memberships.map((m) => authKeys.team(m.teamId)) } },
        }),
      );
      const names = new Map(
        (Responses[tableName] ?? []).map(readTeam).map((team) => [team.teamId, team.name]),
      );
      return memberships.map((m) => ({ ...m, teamName: names.get(m.teamId) ?? m.teamId }));
    },
  };
}
