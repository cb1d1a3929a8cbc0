/** Items read back by the stores are parsed: a corrupt one is an internal error that names it, never a wrong value. */
import { type DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { nanoid } from 'nanoid';
import { beforeAll, describe, expect, it } from 'vitest';
import type { AuthRepository } from '../../../lambdas/auth/ports.ts';
import { apiTokenKey, sessionKey, userKey } from '../../../lambdas/store/auth/keys.ts';
import { makeIdempotencyStore } from '../../../lambdas/store/idempotency.ts';
import { idempotencyKey, pipelineKey } from '../../../lambdas/store/keys.ts';
import { makePipelineRepository } from '../../../lambdas/store/pipelines.ts';
import { makeAuthRepository } from '../../../lambdas/wiring/repositories.ts';
import type { TableNames } from '../../../local/dynamodb.ts';
import { setUpApiEnvironment } from '../api/harness.ts';

let db: DynamoDBDocumentClient;
let names: TableNames;
let auth: AuthRepository;

beforeAll(async () => {
  ({ db, names } = await setUpApiEnvironment());
  auth = makeAuthRepository(db, names.Auth, names.Events);
});

const put = (TableName: string, Item: Record<string, unknown>) =>
  db.send(new PutCommand({ TableName, Item }));

describe('items of the auth table', () => {
  it('read back as written, without their key attributes', async () => {
    const userId = nanoid();
    const user = {
      userId,
      email: `${userId.toLowerCase()}@example.test`,
      name: 'Ada',
      createdAt: '2026-01-01T00:00:00.000Z',
    };
    await auth.createUser(user);
    expect(await auth.getUser(userId)).toEqual(user);
    expect(await auth.findUserByEmail(user.email.toUpperCase())).toEqual(user);
  });

  it('a session with an unknown method is refused by name, not handed to the authorizer', async () => {
    const sessionId = nanoid();
    await put(names.Auth, {
      ...sessionKey(sessionId),
      sessionId,
      userId: 'u1',
      teamId: 't1',
      method: 'sso',
      createdAt: '2026-01-01T00:00:00.000Z',
      expiresAt: '2026-02-01T00:00:00.000Z',
    });
    await expect(auth.getSession(sessionId)).rejects.toMatchObject({
      name: 'CorruptItemError',
      message: expect.stringMatching(/^The stored session is corrupt \(method: /),
    });
  });

  it('a corrupt user names the attribute but never echoes a value (the password hash stays out of logs)', async () => {
    const userId = nanoid();
    const passwordHash = `scrypt$${nanoid()}`;
    await put(names.Auth, {
      ...userKey(userId),
      userId,
      email: 42,
      name: 'Ada',
      createdAt: 'x',
      passwordHash,
    });
    const error = await auth.getUser(userId).catch((caught: unknown) => caught as Error);
    expect(error).toMatchObject({ name: 'CorruptItemError', message: expect.stringContaining('email: ') });
    expect((error as Error).message).not.toContain(passwordHash);
  });

  it('an API token without its owner is refused, so no request is authorized by it', async () => {
    const tokenHash = nanoid();
    await put(names.Auth, {
      ...apiTokenKey(tokenHash),
      tokenId: 'tok',
      tokenHash,
      teamId: 't1',
      name: 'n',
      hint: 'h',
      createdAt: '2026-01-01T00:00:00.000Z',
      expiresAt: null,
      revokedAt: null,
    });
    await expect(auth.findApiTokenByHash(tokenHash)).rejects.toThrow(
      /^The stored API token is corrupt \(userId: /,
    );
  });
});

describe('items of the data table', () => {
  it('a pipeline item without its active configuration is refused by name', async () => {
    const id = nanoid();
    await put(names.Data, {
      ...pipelineKey(id),
      id,
      teamId: 't1',
      name: 'p',
      createdAt: '2026-01-01T00:00:00.000Z',
    });
    await expect(makePipelineRepository(db, names.Data, names.Events).getPipeline(id)).rejects.toThrow(
      /^The stored pipeline is corrupt \(activeConfigurationId: /,
    );
  });

  it('an idempotency record without its run is refused, not read as the run "undefined"', async () => {
    await put(names.Data, {
      ...idempotencyKey('t1', 'k1'),
      requestHash: 'h',
      expiresAt: '2026-01-01T00:00:00.000Z',
    });
    await expect(makeIdempotencyStore(db, names.Data).find('t1', 'k1')).rejects.toThrow(
      /^The stored idempotency key is corrupt \(runId: /,
    );
  });
});
