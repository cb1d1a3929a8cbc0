/*
 * API tokens in the auth table, by the SHA-256 of their secret, with an id pointer for revoking by
 * id: the API token part of AuthRepository.
 */
import { TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/mini';
import type { ApiTokenRecord, AuthRepository } from '../../auth/ports.ts';
import type { DomainEvent } from '../../core/events.ts';
import type { PageRequest } from '../../core/ports/common.ts';
import { failedTransactionItems, isConditionFailure, putNew } from '../conditions.ts';
import { eventPut } from '../events.ts';
import { itemReader } from '../items.ts';
import { KEY_ATTRIBUTES } from '../keys.ts';
import { queryAll, queryPage } from '../query-page.ts';
import { type AuthTable, epochSeconds, eventsTableOf, getItem } from './auth-table.ts';
import { apiTokenIdKey, apiTokenIndexKey, apiTokenKey, userApiTokensPartition } from './keys.ts';

export type ApiTokenStore = Pick<
  AuthRepository,
  | 'createApiToken'
  | 'findApiTokenByHash'
  | 'getApiToken'
  | 'listApiTokensOfUser'
  | 'listLiveApiTokensOfUser'
  | 'revokeApiToken'
  | 'touchApiToken'
>;

/** Revoked and expired tokens stay listed this long, then TTL removes them. */
const REVOKED_TOKEN_RETENTION_MS = 30 * 24 * 3600_000;

/** The token item's schema; built by the factory, so that only the Lambdas that use the store bundle it. */
const apiTokenSchema = (): z.ZodMiniType<ApiTokenRecord> =>
  z.object({
    tokenId: z.string(),
    tokenHash: z.string(),
    userId: z.string(),
    teamId: z.string(),
    name: z.string(),
    hint: z.string(),
    createdAt: z.string(),
    expiresAt: z.nullable(z.string()),
    revokedAt: z.nullable(z.string()),
    lastUsedAt: z.optional(z.nullable(z.string())),
  });

/** What the token functions read with: the table, and the item schemas the factory built. */
interface TokenTable extends AuthTable {
  tokenSchema: z.ZodMiniType<ApiTokenRecord>;
  /** The id pointer: which token hash an id names. */
  tokenIdSchema: z.ZodMiniType<{ tokenHash: string }>;
}

/** DynamoDB adapter of the API token part of AuthRepository. */
export function makeApiTokenStore(table: AuthTable): ApiTokenStore {
  const tokens: TokenTable = {
    ...table,
    tokenSchema: apiTokenSchema(),
    tokenIdSchema: z.object({ tokenHash: z.string() }),
  };
  return {
    createApiToken: (token, event) => createApiToken(table, token, event),
    findApiTokenByHash: (tokenHash) => findApiTokenByHash(tokens, tokenHash),
    getApiToken: (tokenId) => getApiToken(tokens, tokenId),
    listApiTokensOfUser: (userId, teamId, page) => listApiTokensOfUser(tokens, userId, teamId, page),
    listLiveApiTokensOfUser: (userId) => listLiveApiTokensOfUser(tokens, userId),
    revokeApiToken: (token, at, event) => revokeApiToken(table, token, at, event),
    touchApiToken: (tokenHash, at, staleBefore) => touchApiToken(table, tokenHash, at, staleBefore),
  };
}

async function createApiToken(table: AuthTable, token: ApiTokenRecord, event: DomainEvent): Promise<void> {
  const { db, tableName } = table;
  // An expiring token is listed for a while after it lapses, then TTL removes it.
  const ttl = token.expiresAt
    ? { expiresAtEpoch: epochSeconds(token.expiresAt, REVOKED_TOKEN_RETENTION_MS) }
    : {};
  await db.send(
    new TransactWriteCommand({
      TransactItems: [
        putNew(tableName, {
          ...apiTokenKey(token.tokenHash),
          ...apiTokenIndexKey(token),
          ...ttl,
          ...token,
        }),
        putNew(tableName, { ...apiTokenIdKey(token.tokenId), tokenHash: token.tokenHash, ...ttl }),
        eventPut(eventsTableOf(table), event),
      ],
    }),
  );
}

function findApiTokenByHash(tokens: TokenTable, tokenHash: string): Promise<ApiTokenRecord | null> {
  return getItem(tokens, apiTokenKey(tokenHash), tokens.tokenSchema, 'API token');
}

async function getApiToken(tokens: TokenTable, tokenId: string): Promise<ApiTokenRecord | null> {
  const pointer = await getItem(tokens, apiTokenIdKey(tokenId), tokens.tokenIdSchema, 'API token id');
  return pointer ? findApiTokenByHash(tokens, pointer.tokenHash) : null;
}

function listApiTokensOfUser(tokens: TokenTable, userId: string, teamId: string, page: PageRequest) {
  return queryPage(
    tokens.db,
    {
      tableName: tokens.tableName,
      indexName: 'gsi1',
      partition: { name: 'gsi1pk', value: userApiTokensPartition(userId) },
      cursorAttributes: KEY_ATTRIBUTES,
      filter: {
        expression: '#team = :teamId',
        names: { '#team': 'teamId' },
        values: { ':teamId': teamId },
      },
    },
    page,
    itemReader(tokens.tokenSchema, 'API token'),
  );
}

async function listLiveApiTokensOfUser(tokens: TokenTable, userId: string): Promise<ApiTokenRecord[]> {
  // Every page: revoking "all of the user's tokens" must not stop at the first hundred.
  return queryAll(
    tokens.db,
    {
      TableName: tokens.tableName,
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk',
      FilterExpression: 'attribute_not_exists(revokedAt) OR revokedAt = :null',
      ExpressionAttributeValues: { ':pk': userApiTokensPartition(userId), ':null': null },
    },
    itemReader(tokens.tokenSchema, 'API token'),
  );
}

async function revokeApiToken(
  table: AuthTable,
  { tokenHash, tokenId }: Pick<ApiTokenRecord, 'tokenHash' | 'tokenId'>,
  at: string,
  event: DomainEvent,
): Promise<void> {
  const { db, tableName } = table;
  const ttl = epochSeconds(at, REVOKED_TOKEN_RETENTION_MS);
  try {
    await db.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Update: {
              TableName: tableName,
              Key: apiTokenKey(tokenHash),
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
              Key: apiTokenIdKey(tokenId),
              UpdateExpression: 'SET expiresAtEpoch = :ttl',
              ExpressionAttributeValues: { ':ttl': ttl },
            },
          },
          eventPut(eventsTableOf(table), event),
        ],
      }),
    );
  } catch (error) {
    // Already revoked (or gone): revoking is idempotent.
    if (!failedTransactionItems(error).includes(0)) throw error;
  }
}

async function touchApiToken(
  { db, tableName }: AuthTable,
  tokenHash: string,
  at: string,
  staleBefore: string,
): Promise<void> {
  try {
    await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: apiTokenKey(tokenHash),
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
}
