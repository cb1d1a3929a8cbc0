import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { userApiTokensPartition } from '../../../lambdas/store/auth/keys.ts';
import { makeAuthRepository } from '../../../lambdas/wiring/repositories.ts';
import type { TableNames } from '../../../local/dynamodb.ts';
import {
  BROWSER_HEADERS,
  CookieJar,
  createUserWithPassword,
  freshAuthorizer,
  setUpAuthEnvironment,
  TestGateway,
  type TestUser,
} from './gateway.ts';

let db: DynamoDBDocumentClient;
let names: TableNames;
let gateway: TestGateway;
let owner: TestUser;
let stranger: TestUser;
let jar: CookieJar;

beforeAll(async () => {
  ({ db, names } = await setUpAuthEnvironment());
  [owner, stranger] = await Promise.all([
    createUserWithPassword(db, names),
    createUserWithPassword(db, names),
  ]);
  gateway = new TestGateway();
  const login = await gateway.call({
    method: 'POST',
    resource: '/auth/login',
    headers: BROWSER_HEADERS,
    body: { email: owner.email, password: owner.password },
  });
  jar = new CookieJar();
  jar.store(login.cookies);
});

const session = () => ({ cookie: jar.headerFor('/api-tokens'), ...BROWSER_HEADERS });

function create(body: object, headers: Record<string, string> = session()) {
  return gateway.call({ method: 'POST', resource: '/api-tokens', headers, body });
}

/** A gateway whose authorizer has no cached decisions, as a new container would. */
async function coldGateway(): Promise<TestGateway> {
  return gateway.withAuthorizer(await freshAuthorizer(db, names));
}

describe('API token management', () => {
  it('creates a token whose secret is shown once, lists it without secret or hash, and the token works', async () => {
    const expiresAt = new Date(Date.now() + 7 * 24 * 3600_000).toISOString();
    const created = await create({ name: 'ci deploys', teamId: owner.teamId, expiresAt });

    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      id: expect.any(String),
      name: 'ci deploys',
      teamId: owner.teamId,
      expiresAt,
      lastUsedAt: null,
      revokedAt: null,
    });
    expect(created.body.token).toMatch(/^psa_[0-9A-Za-z]{36}$/);
    expect(created.body.hint).toBe(`psa_…${created.body.token.slice(-4)}`);

    const me = await gateway.call({
      method: 'GET',
      resource: '/me',
      headers: { authorization: `Bearer ${created.body.token}` },
    });
    expect(me.body.authentication).toEqual({
      method: 'api-token',
      teamId: owner.teamId,
      role: 'admin',
      tokenId: created.body.id,
    });

    const list = await gateway.call({
      method: 'GET',
      resource: '/api-tokens',
      headers: { cookie: jar.headerFor('/api-tokens') },
    });
    expect(list.status).toBe(200);
    expect(list.body.nextCursor).toBeNull();
    const listed = list.body.items.find((item: { id: string }) => item.id === created.body.id);
    expect(Object.keys(listed).sort()).toEqual(
      ['createdAt', 'expiresAt', 'hint', 'id', 'lastUsedAt', 'name', 'revokedAt', 'teamId'].sort(),
    );
    // The authorizer recorded the use above.
    expect(listed.lastUsedAt).toEqual(expect.any(String));
    expect(JSON.stringify(list.body)).not.toContain(created.body.token);
    expect(list.body.items.map((item: { id: string }) => item.id)).toContain(owner.tokenId);
  });

  it('revokes with DELETE: the token is refused with 401 (at once by a cold authorizer)', async () => {
    const created = await create({ name: 'to revoke', teamId: owner.teamId });
    const bearer = { authorization: `Bearer ${created.body.token}` };
    expect((await gateway.call({ method: 'GET', resource: '/pipelines', headers: bearer })).status).toBe(200);

    const revoked = await gateway.call({
      method: 'DELETE',
      resource: '/api-tokens/{id}',
      pathParameters: { id: created.body.id },
      headers: session(),
    });
    expect(revoked.status).toBe(204);
    expect(
      (
        await gateway.call({
          method: 'DELETE',
          resource: '/api-tokens/{id}',
          pathParameters: { id: created.body.id },
          headers: session(),
        })
      ).status,
    ).toBe(204);

    const cold = await coldGateway();
    expect(await cold.call({ method: 'GET', resource: '/pipelines', headers: bearer })).toMatchObject({
      status: 401,
      body: { error: 'UNAUTHORIZED' },
    });
    const list = await gateway.call({
      method: 'GET',
      resource: '/api-tokens',
      headers: { cookie: jar.headerFor('/api-tokens') },
    });
    expect(list.body.items.find((item: { id: string }) => item.id === created.body.id).revokedAt).toEqual(
      expect.any(String),
    );
  });

  it('refuses a token for a team the user is not in (403), and creation with an API token (403)', async () => {
    expect(await create({ name: 'x', teamId: stranger.teamId })).toMatchObject({
      status: 403,
      body: { error: 'FORBIDDEN' },
    });
    expect((await create({ name: 'x', teamId: 'no-such-team' })).status).toBe(403);
    const withToken = await create(
      { name: 'x', teamId: owner.teamId },
      { authorization: `Bearer ${owner.apiToken}` },
    );
    expect(withToken).toMatchObject({ status: 403, body: { error: 'FORBIDDEN' } });
    expect(
      (await create({ name: 'x', teamId: owner.teamId, expiresAt: '2020-01-01T00:00:00.000Z' })).status,
    ).toBe(400);
    expect((await create({ name: '', teamId: owner.teamId })).status).toBe(400);
  });

  it("answers 404 for another user's token id and never lists it", async () => {
    const response = await gateway.call({
      method: 'DELETE',
      resource: '/api-tokens/{id}',
      pathParameters: { id: stranger.tokenId },
      headers: session(),
    });
    expect(response).toMatchObject({ status: 404, body: { error: 'NOT_FOUND' } });
    const list = await gateway.call({
      method: 'GET',
      resource: '/api-tokens',
      headers: { authorization: `Bearer ${owner.apiToken}` },
    });
    expect(list.body.items.map((item: { id: string }) => item.id)).not.toContain(stranger.tokenId);
    // The stranger's token still works.
    const me = await gateway.call({
      method: 'GET',
      resource: '/me',
      headers: { authorization: `Bearer ${stranger.apiToken}` },
    });
    expect(me.status).toBe(200);
  });

  it("gives a viewer's token only read access, since the role is the user's in that team", async () => {
    const viewer = await createUserWithPassword(db, names, 'viewer');
    const login = await gateway.call({
      method: 'POST',
      resource: '/auth/login',
      body: { email: viewer.email, password: viewer.password, delivery: 'body' },
    });
    const created = await create(
      { name: 'read only', teamId: viewer.teamId },
      { authorization: `Bearer ${login.body.accessToken}` },
    );
    expect(created.status).toBe(201);
    const bearer = { authorization: `Bearer ${created.body.token}` };
    expect((await gateway.call({ method: 'GET', resource: '/pipelines', headers: bearer })).status).toBe(200);
    const write = await gateway.call({
      method: 'POST',
      resource: '/pipelines',
      headers: bearer,
      body: { name: 'nope', slots: [{ id: 'm', name: 'model', kind: 'model', settings: {} }] },
    });
    expect(write).toMatchObject({ status: 403, body: { error: 'FORBIDDEN' } });
  });

  it('pages through the list with a cursor', async () => {
    for (const name of ['p1', 'p2', 'p3']) await create({ name, teamId: owner.teamId });
    const headers = { cookie: jar.headerFor('/api-tokens') };
    const first = await gateway.call({
      method: 'GET',
      resource: '/api-tokens',
      headers,
      query: { limit: '2' },
    });
    expect(first.body.items.map((item: { name: string }) => item.name)).toEqual(['p3', 'p2']);
    const second = await gateway.call({
      method: 'GET',
      resource: '/api-tokens',
      headers,
      query: { limit: '2', cursor: first.body.nextCursor },
    });
    expect(second.body.items[0].name).toBe('p1');
    const tampered = await gateway.call({
      method: 'GET',
      resource: '/api-tokens',
      headers,
      query: {
        cursor: Buffer.from(
          JSON.stringify({ pk: 'x', sk: 'y', gsi1pk: userApiTokensPartition(stranger.userId), gsi1sk: 'z' }),
        ).toString('base64url'),
      },
    });
    expect(tampered.status).toBe(400);
  });
});

describe('a credential acts for one team', () => {
  it('lists, creates and revokes only tokens of its own team, though the user belongs to another', async () => {
    const auth = makeAuthRepository(db, names.Auth, names.Events);
    // The owner also joins the stranger's team, and holds a token there.
    await auth.putMembership({
      userId: owner.userId,
      teamId: stranger.teamId,
      role: 'admin',
      createdAt: new Date().toISOString(),
    });
    const switched = await gateway.call({
      method: 'POST',
      resource: '/auth/refresh',
      headers: { cookie: jar.headerFor('/auth/refresh'), ...BROWSER_HEADERS },
      body: { teamId: stranger.teamId },
    });
    const otherTeamJar = new CookieJar();
    otherTeamJar.store(switched.cookies);
    const otherTeamSession = { cookie: otherTeamJar.headerFor('/api-tokens'), ...BROWSER_HEADERS };
    const elsewhere = await create({ name: 'other team', teamId: stranger.teamId }, otherTeamSession);
    expect(elsewhere.status).toBe(201);
    // Back in the owner's own team (a fresh login).
    const login = await gateway.call({
      method: 'POST',
      resource: '/auth/login',
      headers: BROWSER_HEADERS,
      body: { email: owner.email, password: owner.password, teamId: owner.teamId },
    });
    const ownJar = new CookieJar();
    ownJar.store(login.cookies);
    const own = { cookie: ownJar.headerFor('/api-tokens'), ...BROWSER_HEADERS };

    const listed = await gateway.call({ method: 'GET', resource: '/api-tokens', headers: own });
    const minted = await create({ name: 'for the other team', teamId: stranger.teamId }, own);
    const revoked = await gateway.call({
      method: 'DELETE',
      resource: '/api-tokens/{id}',
      pathParameters: { id: elsewhere.body.id },
      headers: own,
    });

    expect(listed.status).toBe(200);
    expect(listed.body.items.map((token: { teamId: string }) => token.teamId)).not.toContain(stranger.teamId);
    expect(minted).toMatchObject({ status: 403, body: { error: 'FORBIDDEN' } });
    expect(revoked.status).toBe(404);
    expect((await auth.getApiToken(elsewhere.body.id))?.revokedAt ?? null).toBeNull();
  });
});
