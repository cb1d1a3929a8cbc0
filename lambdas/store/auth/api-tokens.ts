/*
 * API tokens in the auth table, by the SHA-256 of their secret, with an id pointer for revoking by
 * id: the API token part of AuthRepository.
 */
import { TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/mini';
import { API_TOKEN_LIMITS } from '../../auth/api-token.ts';
import type { ApiTokenRecord, AuthRepository } from '../../auth/ports.ts';
import { ConflictError, ValidationError } from '../../core/errors.ts';
import type { DomainEvent } from '../../core/events.ts';
import type { PageRequest } from '../../core/ports/common.ts';
import {
  contendedTransactionItems,
  failedTransactionItems,
  isConditionFailure,
  putNew,
} from '../conditions.ts';
import { eventPut } from '../events.ts';
import { itemReader } from '../items.ts';
import { KEY_ATTRIBUTES } from '../keys.ts';
import { queryAll, queryPage } from '../query-page.ts';
import { type AuthTable, epochSeconds, eventsTableOf, getItem } from './auth-table.ts';
import {
  apiTokenCountKey,
  apiTokenIdKey,
  apiTokenIndexKey,
  apiTokenKey,
  userApiTokensPartition,
} from './keys.ts';

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

/**
 * Revoked tokens stay listed this long, then TTL removes them. An expired token stays until it is
 * revoked: it holds its place in the counts (API_TOKEN_LIMITS) until then, and TTL removing it
 * unrevoked would leave the counts one too high for good.
 */
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

/** Adds `delta` to a token count; raising it is conditioned on staying within `max`. */
function countUpdate(
  tableName: string,
  owner: Parameters<typeof apiTokenCountKey>[0],
  delta: 1 | -1,
  max?: number,
) {
  return {
    Update: {
      TableName: tableName,
      Key: apiTokenCountKey(owner),
      UpdateExpression: 'SET liveApiTokens = if_not_exists(liveApiTokens, :zero) + :delta',
      ...(max === undefined
        ? { ExpressionAttributeValues: { ':zero': 0, ':delta': delta } }
        : {
            ConditionExpression: 'attribute_not_exists(liveApiTokens) OR liveApiTokens < :max',
            ExpressionAttributeValues: { ':zero': 0, ':delta': delta, ':max': max },
          }),
    },
  };
}

async function createApiToken(table: AuthTable, token: ApiTokenRecord, event: DomainEvent): Promise<void> {
  const { db, tableName } = table;
  const { perPerson, perTeam } = API_TOKEN_LIMITS;
  try {
    await db.send(
      new TransactWriteCommand({
        TransactItems: [
          countUpdate(tableName, { userId: token.userId }, 1, perPerson),
          countUpdate(tableName, { teamId: token.teamId }, 1, perTeam),
          putNew(tableName, { ...apiTokenKey(token.tokenHash), ...apiTokenIndexKey(token), ...token }),
          putNew(tableName, { ...apiTokenIdKey(token.tokenId), tokenHash: token.tokenHash }),
          eventPut(eventsTableOf(table), event),
        ],
      }),
    );
  } catch (error) {
    const failed = failedTransactionItems(error);
    const revoke = 'revoke one you no longer use (expired ones count until revoked) first';
    if (failed.includes(0))
      throw new ValidationError(
        `A person has at most ${perPerson} API tokens that are not revoked; ${revoke}.`,
        {
          cause: error,
          details: [{ path: 'name', message: `at most ${perPerson} API tokens a person` }],
        },
      );
    if (failed.includes(1))
      throw new ValidationError(
        `A team has at most ${perTeam} API tokens that are not revoked; ${revoke}, or ask a team member to.`,
        { cause: error, details: [{ path: 'teamId', message: `at most ${perTeam} API tokens a team` }] },
      );
    if (contendedTransactionItems(error).length > 0)
      throw new ConflictError('Another API token was being created at the same moment; try again.', {
        cause: error,
      });
    throw error;
  }
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
  // Whose counts it frees: the token item says (gone: nothing to revoke).
  const token = await getItem(
    table,
    apiTokenKey(tokenHash),
    z.object({ userId: z.string(), teamId: z.string() }),
    'API token',
  );
  if (!token) return;
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
          // Only when this call revokes it (the first item's condition): once per token.
          countUpdate(tableName, { userId: token.userId }, -1),
          countUpdate(tableName, { teamId: token.teamId }, -1),
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
