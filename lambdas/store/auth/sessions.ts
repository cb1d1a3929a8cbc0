/*
 * Sessions and their refresh tokens in the auth table (a used refresh token is kept until the
 * session ends, to detect its reuse): the session part of AuthRepository.
 */
import { TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/mini';
import type { AuthRepository, RefreshTokenRecord, RotationOutcome, SessionRecord } from '../../auth/ports.ts';
import { failedTransactionItems, isConditionFailure, putNew } from '../conditions.ts';
import { itemReader } from '../items.ts';
import { queryAll } from '../query-page.ts';
import { type AuthTable, epochSeconds, getItem } from './auth-table.ts';
import { refreshTokenKey, sessionIndexKey, sessionKey, userSessionsPartition } from './keys.ts';

export type SessionStore = Pick<
  AuthRepository,
  | 'createSession'
  | 'getSession'
  | 'listActiveSessionIdsOfUser'
  | 'revokeSession'
  | 'findRefreshToken'
  | 'rotateRefreshToken'
>;

/** The items' schemas; built by the factory, so that only the Lambdas that use the store bundle them. */
function sessionSchemas() {
  const session: z.ZodMiniType<SessionRecord> = z.object({
    sessionId: z.string(),
    userId: z.string(),
    teamId: z.string(),
    method: z.enum(['password', 'magic-link']),
    createdAt: z.string(),
    expiresAt: z.string(),
    lastRefreshedAt: z.optional(z.string()),
    revokedAt: z.optional(z.string()),
    revokedReason: z.optional(
      z.enum(['logout', 'refresh-token-reuse', 'password-changed', 'member-removed']),
    ),
  });
  const refreshToken: z.ZodMiniType<RefreshTokenRecord> = z.object({
    tokenHash: z.string(),
    sessionId: z.string(),
    createdAt: z.string(),
    expiresAt: z.string(),
    usedAt: z.optional(z.string()),
  });
  return { session, refreshToken, sessionId: z.object({ sessionId: z.string() }) };
}

/** What the session functions read with: the table, and the item schemas the factory built. */
interface SessionTable extends AuthTable {
  schemas: ReturnType<typeof sessionSchemas>;
}

/** What rotating a refresh token is given; the port's argument. */
type Rotation = Parameters<SessionStore['rotateRefreshToken']>[0];

/** DynamoDB adapter of the session part of AuthRepository. */
export function makeSessionStore(table: AuthTable): SessionStore {
  const sessions: SessionTable = { ...table, schemas: sessionSchemas() };
  const readSessionId = itemReader(sessions.schemas.sessionId, 'session');
  return {
    createSession: (session, refreshToken) => createSession(table, session, refreshToken),
    getSession: (sessionId) => getSession(sessions, sessionId),
    listActiveSessionIdsOfUser: (userId) => listActiveSessionIdsOfUser(table, readSessionId, userId),
    revokeSession: (sessionId, at, reason) => revokeSession(table, sessionId, at, reason),
    findRefreshToken: (tokenHash) =>
      getItem(table, refreshTokenKey(tokenHash), sessions.schemas.refreshToken, 'refresh token'),
    rotateRefreshToken: (rotation) => rotateRefreshToken(sessions, rotation),
  };
}

function getSession(sessions: SessionTable, sessionId: string): Promise<SessionRecord | null> {
  return getItem(sessions, sessionKey(sessionId), sessions.schemas.session, 'session');
}

/** Kept until the session's own end, not the token's: a stolen token replayed late is still reuse. */
function refreshTokenPut(tableName: string, token: RefreshTokenRecord, sessionExpiresAt: string) {
  return putNew(tableName, {
    ...refreshTokenKey(token.tokenHash),
    expiresAtEpoch: epochSeconds(sessionExpiresAt),
    ...token,
  });
}

async function createSession(
  { db, tableName }: AuthTable,
  session: SessionRecord,
  refreshToken: RefreshTokenRecord,
): Promise<void> {
  await db.send(
    new TransactWriteCommand({
      TransactItems: [
        putNew(tableName, {
          ...sessionKey(session.sessionId),
          ...sessionIndexKey(session),
          expiresAtEpoch: epochSeconds(session.expiresAt),
          ...session,
        }),
        refreshTokenPut(tableName, refreshToken, session.expiresAt),
      ],
    }),
  );
}

async function listActiveSessionIdsOfUser(
  { db, tableName }: AuthTable,
  readSessionId: (item: unknown) => { sessionId: string },
  userId: string,
): Promise<string[]> {
  // Every page: a password change must end all of the user's sessions, however many.
  return queryAll(
    db,
    {
      TableName: tableName,
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk',
      FilterExpression: 'attribute_not_exists(revokedAt)',
      ExpressionAttributeValues: { ':pk': userSessionsPartition(userId) },
    },
    (item) => readSessionId(item).sessionId,
  );
}

async function revokeSession(
  { db, tableName }: AuthTable,
  sessionId: string,
  at: string,
  reason: NonNullable<SessionRecord['revokedReason']>,
): Promise<void> {
  try {
    await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: sessionKey(sessionId),
        UpdateExpression: 'SET revokedAt = :at, revokedReason = :reason',
        ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(revokedAt)',
        ExpressionAttributeValues: { ':at': at, ':reason': reason },
      }),
    );
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
}

async function rotateRefreshToken(
  sessions: SessionTable,
  { usedHash, usedAt, next, teamId }: Rotation,
): Promise<RotationOutcome> {
  const { db, tableName } = sessions;
  const session = await getSession(sessions, next.sessionId);
  if (!session) return 'session-ended';
  try {
    await db.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Update: {
              TableName: tableName,
              Key: refreshTokenKey(usedHash),
              UpdateExpression: 'SET usedAt = :at',
              ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(usedAt)',
              ExpressionAttributeValues: { ':at': usedAt },
            },
          },
          refreshTokenPut(tableName, next, session.expiresAt),
          {
            Update: {
              TableName: tableName,
              Key: sessionKey(next.sessionId),
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
}
