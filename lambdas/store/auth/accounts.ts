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
import { failedTransactionItems, putNew } from '../conditions.ts';
import { itemReader } from '../items.ts';
import { type AuthTable, getItem } from './auth-table.ts';
import {
  emailKey,
  MEMBERSHIP_PREFIX,
  membershipIndexKey,
  membershipKey,
  teamKey,
  userKey,
  userPartition,
} from './keys.ts';

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

/** The items' schemas; built by the factory, so that only the Lambdas that use the store bundle them. */
function accountSchemas() {
  const team: z.ZodMiniType<Team> = z.object({ teamId: z.string(), name: z.string(), createdAt: z.string() });
  const user: z.ZodMiniType<User> = z.object({
    userId: z.string(),
    email: z.string(),
    name: z.string(),
    createdAt: z.string(),
    passwordHash: z.optional(z.string()),
    credentialsVersion: z.optional(z.number()),
  });
  /** The email item: which user holds the address. */
  const email = z.object({ userId: z.string() });
  const membership: z.ZodMiniType<Membership> = z.object({
    userId: z.string(),
    teamId: z.string(),
    role: roleSchema,
    createdAt: z.string(),
  });
  return { team, user, email, membership };
}

/** DynamoDB adapter of the accounts part of AuthRepository. */
export function makeAccountStore(table: AuthTable): AccountStore {
  const { db, tableName } = table;
  const schemas = accountSchemas();
  const readMembership = itemReader(schemas.membership, 'membership');
  const readTeam = itemReader(schemas.team, 'team');
  const getUser = (userId: string) => getItem(table, userKey(userId), schemas.user, 'user');

  return {
    async createTeam(team) {
      await db.send(
        new PutCommand({
          TableName: tableName,
          Item: { ...teamKey(team.teamId), ...team },
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
              putNew(tableName, { ...emailKey(email), userId: user.userId }),
              putNew(tableName, { ...userKey(user.userId), ...user, email }),
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
      const entry = await getItem(table, emailKey(normalizeEmail(email)), schemas.email, 'email entry');
      return entry ? getUser(entry.userId) : null;
    },

    async setPasswordHash(userId, passwordHash) {
      await db.send(
        new UpdateCommand({
          TableName: tableName,
          Key: userKey(userId),
          // One write: no moment where the new password works and the old links still do.
          UpdateExpression: 'SET passwordHash = :hash ADD credentialsVersion :one',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':hash': passwordHash, ':one': 1 },
        }),
      );
    },

    async putMembership(membership) {
      await db.send(
        new PutCommand({
          TableName: tableName,
          Item: {
            ...membershipKey(membership.userId, membership.teamId),
            ...membershipIndexKey(membership),
            ...membership,
          },
        }),
      );
    },

    getMembership: (userId, teamId) =>
      getItem(table, membershipKey(userId, teamId), schemas.membership, 'membership'),

    async listTeamsOfUser(userId) {
      const { Items = [] } = await db.send(
        new QueryCommand({
          TableName: tableName,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :team)',
          ExpressionAttributeValues: {
            ':pk': userPartition(userId),
            ':team': MEMBERSHIP_PREFIX,
          },
          ConsistentRead: true,
          Limit: 100,
        }),
      );
      const memberships = Items.map(readMembership);
      if (memberships.length === 0) return [];
      const { Responses = {} } = await db.send(
        new BatchGetCommand({
          RequestItems: { [tableName]: { Keys: memberships.map((m) => teamKey(m.teamId)) } },
        }),
      );
      const names = new Map(
        (Responses[tableName] ?? []).map(readTeam).map((team) => [team.teamId, team.name]),
      );
      return memberships.map((m) => ({ ...m, teamName: names.get(m.teamId) ?? m.teamId }));
    },
  };
}
