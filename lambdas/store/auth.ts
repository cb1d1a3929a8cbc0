import {
  BatchGetCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
} from '@aws-sdk/lib-dynamodb';
import type { ApiTokenRecord, AuthRepository, Membership, Team, User } from '../auth/ports.ts';
import { ConflictError } from '../core/errors.ts';
import { failedTransactionItems } from './conditions.ts';

/*
 * Keys of the auth table. No secret is stored: tokens by their SHA-256 only.
 *   team        pk TEAM#<teamId>          sk TEAM
 *   user        pk USER#<userId>          sk USER
 *   email       pk EMAIL#<lower-case>     sk EMAIL        (uniqueness and login lookup)
 *   membership  pk USER#<userId>          sk TEAM#<teamId> gsi1 TEAM#<teamId>#MEMBERS / <userId>
 *   api token   pk APITOKEN#<sha256>      sk APITOKEN     gsi1 USER#<userId>#APITOKENS / <createdAt>#<tokenId>
 */
const KEYS = ['pk', 'sk', 'gsi1pk', 'gsi1sk', 'expiresAtEpoch'];

function strip<T>(item: Record<string, unknown>): T {
  const record = { ...item };
  for (const key of KEYS) delete record[key];
  return record as T;
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** DynamoDB adapter of AuthRepository. */
export function makeAuthRepository(db: DynamoDBDocumentClient, tableName: string): AuthRepository {
  const get = async <T>(pk: string, sk: string): Promise<T | null> => {
    const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: { pk, sk } }));
    return Item ? strip<T>(Item) : null;
  };

  return {
    async createTeam(team: Team) {
      await db.send(
        new PutCommand({
          TableName: tableName,
          Item: { pk: `TEAM#${team.teamId}`, sk: 'TEAM', ...team },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
    },

    async createUser(user: User) {
      const email = normalizeEmail(user.email);
      try {
        await db.send(
          new TransactWriteCommand({
            TransactItems: [
              {
                Put: {
                  TableName: tableName,
                  Item: { pk: `EMAIL#${email}`, sk: 'EMAIL', userId: user.userId },
                  ConditionExpression: 'attribute_not_exists(pk)',
                },
              },
              {
                Put: {
                  TableName: tableName,
                  Item: { pk: `USER#${user.userId}`, sk: 'USER', ...user, email },
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

    getUser: (userId) => get<User>(`USER#${userId}`, 'USER'),

    async findUserByEmail(email) {
      const entry = await get<{ userId: string }>(`EMAIL#${normalizeEmail(email)}`, 'EMAIL');
      return entry ? get<User>(`USER#${entry.userId}`, 'USER') : null;
    },

    async putMembership(membership: Membership) {
      await db.send(
        new PutCommand({
          TableName: tableName,
          Item: {
            pk: `USER#${membership.userId}`,
            sk: `TEAM#${membership.teamId}`,
            gsi1pk: `TEAM#${membership.teamId}#MEMBERS`,
            gsi1sk: membership.userId,
            ...membership,
          },
        }),
      );
    },

    getMembership: (userId, teamId) => get<Membership>(`USER#${userId}`, `TEAM#${teamId}`),

    async listTeamsOfUser(userId) {
      const { Items = [] } = await db.send(
        new QueryCommand({
          TableName: tableName,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :team)',
          ExpressionAttributeValues: { ':pk': `USER#${userId}`, ':team': 'TEAM#' },
          Limit: 100,
        }),
      );
      const memberships = Items.map((item) => strip<Membership>(item));
      if (memberships.length === 0) return [];
      const { Responses = {} } = await db.send(
        new BatchGetCommand({
          RequestItems: {
            [tableName]: { Keys: memberships.map((m) => ({ pk: `TEAM#${m.teamId}`, sk: 'TEAM' })) },
          },
        }),
      );
      const names = new Map(
        (Responses[tableName] ?? []).map((team) => [team.teamId as string, team.name as string]),
      );
      return memberships.map((m) => ({ ...m, teamName: names.get(m.teamId) ?? m.teamId }));
    },

    async createApiToken(token: ApiTokenRecord) {
      await db.send(
        new PutCommand({
          TableName: tableName,
          Item: {
            pk: `APITOKEN#${token.tokenHash}`,
            sk: 'APITOKEN',
            gsi1pk: `USER#${token.userId}#APITOKENS`,
            gsi1sk: `${token.createdAt}#${token.tokenId}`,
            ...token,
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
    },

    findApiTokenByHash: (tokenHash) => get<ApiTokenRecord>(`APITOKEN#${tokenHash}`, 'APITOKEN'),
  };
}
