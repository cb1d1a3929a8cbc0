import {
  BatchGetCommand,
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { normalizeEmail } from '../auth/email-address.ts';
import type {
  ApiTokenRecord,
  AuthRepository,
  MagicLinkRecord,
  Membership,
  RefreshTokenRecord,
  SessionRecord,
  Team,
  User,
} from '../auth/ports.ts';
import { ConflictError } from '../core/errors.ts';
import { failedTransactionItems, isConditionFailure } from './conditions.ts';
import { queryPage } from './query-page.ts';

/*
 * Keys of the auth table. No secret is stored: tokens by their SHA-256 only, passwords as scrypt.
 *   team          pk TEAM#<teamId>            sk TEAM
 *   user          pk USER#<userId>            sk USER
 *   email         pk EMAIL#<lower-case>       sk EMAIL        (uniqueness and login lookup)
 *   membership    pk USER#<userId>            sk TEAM#<teamId> gsi1 TEAM#<teamId>#MEMBERS / <userId>
 *   api token     pk APITOKEN#<sha256>        sk APITOKEN     gsi1 USER#<userId>#APITOKENS / <createdAt>#<tokenId>
 *   api token id  pk APITOKENID#<tokenId>     sk APITOKENID   → tokenHash (for DELETE /api-tokens/{id})
 *   session       pk SESSION#<sessionId>      sk SESSION      gsi1 USER#<userId>#SESSIONS / <createdAt>#<sessionId>
 *   refresh token pk REFRESH#<sha256>         sk REFRESH      (kept after use until the session ends: reuse detection)
 *   magic link    pk MAGICLINK#<sha256>       sk MAGICLINK
 *   attempts      pk ATTEMPTS#<key>           sk ATTEMPTS     (login / magic-link throttling windows)
 * Items that expire carry `expiresAtEpoch` for DynamoDB TTL. TTL deletes lazily (up to days
 * late), so every reader also compares the item's own expiry with the clock.
 */
const KEYS = ['pk', 'sk', 'gsi1pk', 'gsi1sk', 'expiresAtEpoch'];
/** Revoked and expired tokens stay listed this long, then TTL removes them. */
const REVOKED_TOKEN_RETENTION_MS = 30 * 24 * 3600_000;

function strip<T>(item: Record<string, unknown>): T {
  const record = { ...item };
  for (const key of KEYS) delete record[key];
  return record as T;
}

function epochSeconds(iso: string, extraMs = 0): number {
  return Math.ceil((Date.parse(iso) + extraMs) / 1000);
}

export { normalizeEmail };

/** DynamoDB adapter of AuthRepository. */
export function makeAuthRepository(db: DynamoDBDocumentClient, tableName: string): AuthRepository {
  // Strongly consistent: a revocation written a moment ago must be seen by the next check.
  const get = async <T>(pk: string, sk: string): Promise<T | null> => {
    const { Item } = await db.send(
      new GetCommand({ TableName: tableName, Key: { pk, sk }, ConsistentRead: true }),
    );
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

    async setPasswordHash(userId, passwordHash) {
      await db.send(
        new UpdateCommand({
          TableName: tableName,
          Key: { pk: `USER#${userId}`, sk: 'USER' },
          UpdateExpression: 'SET passwordHash = :hash',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':hash': passwordHash },
        }),
      );
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
          ConsistentRead: true,
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
      // An expiring token is listed for a while after it lapses, then TTL removes it.
      const ttl = token.expiresAt
        ? { expiresAtEpoch: epochSeconds(token.expiresAt, REVOKED_TOKEN_RETENTION_MS) }
        : {};
      await db.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Put: {
                TableName: tableName,
                Item: {
                  pk: `APITOKEN#${token.tokenHash}`,
                  sk: 'APITOKEN',
                  gsi1pk: `USER#${token.userId}#APITOKENS`,
                  gsi1sk: `${token.createdAt}#${token.tokenId}`,
                  ...ttl,
                  ...token,
                },
                ConditionExpression: 'attribute_not_exists(pk)',
              },
            },
            {
              Put: {
                TableName: tableName,
                Item: {
                  pk: `APITOKENID#${token.tokenId}`,
                  sk: 'APITOKENID',
                  tokenHash: token.tokenHash,
                  ...ttl,
                },
                ConditionExpression: 'attribute_not_exists(pk)',
              },
            },
          ],
        }),
      );
    },

    findApiTokenByHash: (tokenHash) => get<ApiTokenRecord>(`APITOKEN#${tokenHash}`, 'APITOKEN'),

    async getApiToken(tokenId) {
      const pointer = await get<{ tokenHash: string }>(`APITOKENID#${tokenId}`, 'APITOKENID');
      return pointer ? get<ApiTokenRecord>(`APITOKEN#${pointer.tokenHash}`, 'APITOKEN') : null;
    },

    listApiTokensOfUser: (userId, teamId, page) =>
      queryPage(
        db,
        {
          tableName,
          indexName: 'gsi1',
          partition: { name: 'gsi1pk', value: `USER#${userId}#APITOKENS` },
          cursorAttributes: ['pk', 'sk', 'gsi1pk', 'gsi1sk'],
          filter: {
            expression: '#team = :teamId',
            names: { '#team': 'teamId' },
            values: { ':teamId': teamId },
          },
        },
        page,
        (item) => strip<ApiTokenRecord>(item),
      ),

    async revokeApiToken({ tokenHash, tokenId }, at) {
      const ttl = epochSeconds(at, REVOKED_TOKEN_RETENTION_MS);
      try {
        await db.send(
          new TransactWriteCommand({
            TransactItems: [
              {
                Update: {
                  TableName: tableName,
                  Key: { pk: `APITOKEN#${tokenHash}`, sk: 'APITOKEN' },
                  UpdateExpression: 'SET revokedAt = :at, expiresAtEpoch = :ttl',
                  ConditionExpression:
                    'attribute_exists(pk) AND (attribute_not_exists(revokedAt) OR revokedAt = :null)',
                  ExpressionAttributeValues: { ':at': at, ':null': null, ':ttl': ttl },
                },
              },
              {
                // The id pointer goes with the token when TTL removes it.
                Update: {
                  TableName: tableName,
                  Key: { pk: `APITOKENID#${tokenId}`, sk: 'APITOKENID' },
                  UpdateExpression: 'SET expiresAtEpoch = :ttl',
                  ExpressionAttributeValues: { ':ttl': ttl },
                },
              },
            ],
          }),
        );
      } catch (error) {
        // Already revoked (or gone): revoking is idempotent.
        if (!failedTransactionItems(error).includes(0)) throw error;
      }
    },

    async touchApiToken(tokenHash, at, staleBefore) {
      try {
        await db.send(
          new UpdateCommand({
            TableName: tableName,
            Key: { pk: `APITOKEN#${tokenHash}`, sk: 'APITOKEN' },
            UpdateExpression: 'SET lastUsedAt = :at',
            ConditionExpression:
              'attribute_exists(pk) AND (attribute_not_exists(lastUsedAt) OR lastUsedAt = :null OR lastUsedAt < :stale)',
            ExpressionAttributeValues: { ':at': at, ':stale': staleBefore, ':null': null },
          }),
        );
      } catch (error) {
        // Another container recorded a use within the minute: nothing to do.
        if (!isConditionFailure(error)) throw error;
      }
    },

    async createSession(session, refreshToken) {
      await db.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Put: {
                TableName: tableName,
                Item: {
                  pk: `SESSION#${session.sessionId}`,
                  sk: 'SESSION',
                  gsi1pk: `USER#${session.userId}#SESSIONS`,
                  gsi1sk: `${session.createdAt}#${session.sessionId}`,
                  expiresAtEpoch: epochSeconds(session.expiresAt),
                  ...session,
                },
                ConditionExpression: 'attribute_not_exists(pk)',
              },
            },
            { Put: refreshTokenPut(tableName, refreshToken, session.expiresAt) },
          ],
        }),
      );
    },

    getSession: (sessionId) => get<SessionRecord>(`SESSION#${sessionId}`, 'SESSION'),

    async listActiveSessionIdsOfUser(userId) {
      // Every page: a password change must end all of the user's sessions, however many.
      const ids: string[] = [];
      let startKey: Record<string, unknown> | undefined;
      do {
        const page = await db.send(
          new QueryCommand({
            TableName: tableName,
            IndexName: 'gsi1',
            KeyConditionExpression: 'gsi1pk = :pk',
            FilterExpression: 'attribute_not_exists(revokedAt)',
            ExpressionAttributeValues: { ':pk': `USER#${userId}#SESSIONS` },
            ExclusiveStartKey: startKey,
          }),
        );
        ids.push(...(page.Items ?? []).map((item) => item.sessionId as string));
        startKey = page.LastEvaluatedKey;
      } while (startKey);
      return ids;
    },

    async revokeSession(sessionId, at, reason) {
      try {
        await db.send(
          new UpdateCommand({
            TableName: tableName,
            Key: { pk: `SESSION#${sessionId}`, sk: 'SESSION' },
            UpdateExpression: 'SET revokedAt = :at, revokedReason = :reason',
            ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(revokedAt)',
            ExpressionAttributeValues: { ':at': at, ':reason': reason },
          }),
        );
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
      }
    },

    findRefreshToken: (tokenHash) => get<RefreshTokenRecord>(`REFRESH#${tokenHash}`, 'REFRESH'),

    async rotateRefreshToken({ usedHash, usedAt, next, teamId }) {
      const session = await get<SessionRecord>(`SESSION#${next.sessionId}`, 'SESSION');
      if (!session) return 'session-ended';
      try {
        await db.send(
          new TransactWriteCommand({
            TransactItems: [
              {
                Update: {
                  TableName: tableName,
                  Key: { pk: `REFRESH#${usedHash}`, sk: 'REFRESH' },
                  UpdateExpression: 'SET usedAt = :at',
                  ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(usedAt)',
                  ExpressionAttributeValues: { ':at': usedAt },
                },
              },
              { Put: refreshTokenPut(tableName, next, session.expiresAt) },
              {
                Update: {
                  TableName: tableName,
                  Key: { pk: `SESSION#${next.sessionId}`, sk: 'SESSION' },
                  UpdateExpression: 'SET teamId = :team, lastRefreshedAt = :at',
                  ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(revokedAt)',
                  ExpressionAttributeValues: { ':team': teamId, ':at': usedAt },
                },
              },
            ],
          }),
        );
        return 'rotated';
      } catch (error) {
        const failed = failedTransactionItems(error);
        if (failed.includes(0)) return 'reused';
        if (failed.includes(2)) return 'session-ended';
        throw error;
      }
    },

    async createMagicLink(link) {
      await db.send(
        new PutCommand({
          TableName: tableName,
          Item: {
            pk: `MAGICLINK#${link.tokenHash}`,
            sk: 'MAGICLINK',
            expiresAtEpoch: epochSeconds(link.expiresAt),
            ...link,
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
    },

    async consumeMagicLink(tokenHash) {
      try {
        // The delete is the one-time check: of two concurrent verifications only one gets the item.
        const { Attributes } = await db.send(
          new DeleteCommand({
            TableName: tableName,
            Key: { pk: `MAGICLINK#${tokenHash}`, sk: 'MAGICLINK' },
            ConditionExpression: 'attribute_exists(pk)',
            ReturnValues: 'ALL_OLD',
          }),
        );
        return Attributes ? strip<MagicLinkRecord>(Attributes) : null;
      } catch (error) {
        if (isConditionFailure(error)) return null;
        throw error;
      }
    },

    async reserveAttempt(key, { limit, windowMs }, now) {
      const nowIso = now.toISOString();
      const windowFloor = new Date(now.getTime() - windowMs).toISOString();
      const Key = { pk: `ATTEMPTS#${key}`, sk: 'ATTEMPTS' };
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
      const window = await get<{ windowStartedAt: string }>(Key.pk, Key.sk);
      const startedAt = window ? Date.parse(window.windowStartedAt) : now.getTime();
      return { allowed: false, retryAt: new Date(startedAt + windowMs) };
    },

    async clearAttempts(key) {
      await db.send(
        new DeleteCommand({ TableName: tableName, Key: { pk: `ATTEMPTS#${key}`, sk: 'ATTEMPTS' } }),
      );
    },
  };
}

function refreshTokenPut(tableName: string, token: RefreshTokenRecord, sessionExpiresAt: string) {
  return {
    TableName: tableName,
    // Kept until the session's own end, not the token's: a stolen token replayed late is still reuse.
    Item: {
      pk: `REFRESH#${token.tokenHash}`,
      sk: 'REFRESH',
      expiresAtEpoch: epochSeconds(sessionExpiresAt),
      ...token,
    },
    ConditionExpression: 'attribute_not_exists(pk)',
  };
}
