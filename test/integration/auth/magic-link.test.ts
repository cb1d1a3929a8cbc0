import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { MAGIC_LINK_MIN_RESPONSE_MS, MAGIC_LINK_PREFIX } from '../../../lambdas/auth/magic-link.ts';
import { generateSecret, hashSecret } from '../../../lambdas/auth/secret-token.ts';
import { makeAuthRepository } from '../../../lambdas/wiring/repositories.ts';
import type { TableNames } from '../../../local/dynamodb.ts';
import {
  APP_URL,
  BROWSER_HEADERS,
  CookieJar,
  createUserWithPassword,
  setUpAuthEnvironment,
  TestGateway,
  type TestUser,
} from './gateway.ts';

let db: DynamoDBDocumentClient;
let names: TableNames;
let outbox: string;
let gateway: TestGateway;
let user: TestUser;

beforeAll(async () => {
  ({ db, names, outbox } = await setUpAuthEnvironment());
  user = await createUserWithPassword(db, names);
  gateway = new TestGateway();
});

function requestLink(email: string) {
  return gateway.call({ method: 'POST', resource: '/auth/magic-link', body: { email } });
}

function verify(token: string, headers: Record<string, string> = BROWSER_HEADERS) {
  return gateway.call({ method: 'POST', resource: '/auth/magic-link/verify', headers, body: { token } });
}

async function outboxFiles(): Promise<string[]> {
  return (await readdir(outbox)).sort();
}

/** The token of the newest email to `email`, read from its outbox file as a developer would. */
async function latestLinkTo(email: string): Promise<{ file: string; url: URL }> {
  const file = (await outboxFiles()).filter((name) => name.endsWith(`-${email}.txt`)).at(-1);
  if (!file) throw new Error(`No email to ${email}`);
  const text = await readFile(path.join(outbox, file), 'utf8');
  const link = /https?:\/\/\S+/.exec(text)?.[0];
  if (!link) throw new Error('No link in the email');
  return { file, url: new URL(link) };
}

describe('magic links', () => {
  it('answers 202 for a known and an unknown address alike, and only the known one gets an email', async () => {
    const before = await outboxFiles();
    const timed = async (email: string) => {
      const started = performance.now();
      const response = await requestLink(email);
      return { ...response, ms: performance.now() - started };
    };
    const known = await timed(user.email.toUpperCase());
    const unknown = await timed('nobody-at-all@example.test');
    // Both wait for the same floor, so sending the email does not tell the address has an account.
    expect(Math.min(known.ms, unknown.ms)).toBeGreaterThanOrEqual(MAGIC_LINK_MIN_RESPONSE_MS - 5);

    expect(known.status).toBe(202);
    expect(unknown.status).toBe(202);
    expect(unknown.body).toEqual(known.body);
    const added = (await outboxFiles()).filter((name) => !before.includes(name));
    expect(added).toHaveLength(1);
    expect(added[0]).toMatch(
      new RegExp(`^\\d{4}-\\d{2}-\\d{2}T\\d{2}-\\d{2}-\\d{2}-\\d{3}Z-${user.email}\\.txt$`),
    );
    const { url } = await latestLinkTo(user.email);
    expect(`${url.origin}${url.pathname}`).toBe(`${APP_URL}/auth/magic-link`);
    expect(url.searchParams.get('token')).toMatch(/^psm_[0-9A-Za-z]{36}$/);
  });

  it('exchanges the link for a session once: a replay is 401', async () => {
    await requestLink(user.email);
    const token = (await latestLinkTo(user.email)).url.searchParams.get('token') as string;

    const first = await verify(token);
    expect(first.status).toBe(200);
    expect(first.body.session).toMatchObject({ userId: user.userId, teamId: user.teamId });
    const jar = new CookieJar();
    jar.store(first.cookies);
    const me = await gateway.call({
      method: 'GET',
      resource: '/me',
      headers: { cookie: jar.headerFor('/me') },
    });
    expect(me.body.authentication).toMatchObject({ method: 'session', teamId: user.teamId });

    const replay = await verify(token);
    expect(replay).toMatchObject({ status: 401, body: { error: 'UNAUTHORIZED' } });
    expect(replay.cookies).toEqual([]);

    // Whoever reads the mailbox may sign in, but not take over the password without knowing it.
    const takeover = await gateway.call({
      method: 'POST',
      resource: '/me/password',
      headers: { cookie: jar.headerFor('/me/password'), ...BROWSER_HEADERS },
      body: { newPassword: 'an attacker chose this one' },
    });
    expect(takeover).toMatchObject({ status: 403, body: { error: 'FORBIDDEN' } });
  });

  it('refuses a link sent before a password change; one sent after it works', async () => {
    const owner = await createUserWithPassword(db, names);
    await requestLink(owner.email);
    const before = (await latestLinkTo(owner.email)).url.searchParams.get('token') as string;
    const login = await gateway.call({
      method: 'POST',
      resource: '/auth/login',
      headers: BROWSER_HEADERS,
      body: { email: owner.email, password: owner.password },
    });
    const jar = new CookieJar();
    jar.store(login.cookies);

    const changed = await gateway.call({
      method: 'POST',
      resource: '/me/password',
      headers: { cookie: jar.headerFor('/me/password'), ...BROWSER_HEADERS },
      body: { currentPassword: owner.password, newPassword: 'a much better passphrase' },
    });
    expect(changed.status).toBe(204);

    expect(await verify(before)).toMatchObject({ status: 401, body: { error: 'UNAUTHORIZED' } });
    await requestLink(owner.email);
    const after = (await latestLinkTo(owner.email)).url.searchParams.get('token') as string;
    expect(after).not.toBe(before);
    expect((await verify(after)).status).toBe(200);
  });

  it('refuses an expired link, a made-up one, and a cookie verification from another origin', async () => {
    const token = generateSecret(MAGIC_LINK_PREFIX);
    await makeAuthRepository(db, names.Auth, names.Events).createMagicLink({
      tokenHash: hashSecret(token),
      userId: user.userId,
      credentialsVersion: 0,
      createdAt: new Date(Date.now() - 20 * 60_000).toISOString(),
      expiresAt: new Date(Date.now() - 5 * 60_000).toISOString(),
    });
    expect(await verify(token)).toMatchObject({ status: 401, body: { error: 'UNAUTHORIZED' } });
    expect((await verify(generateSecret(MAGIC_LINK_PREFIX))).status).toBe(401);
    expect((await verify('psm_not-even-well-formed')).status).toBe(401);

    await requestLink(user.email);
    const fresh = (await latestLinkTo(user.email)).url.searchParams.get('token') as string;
    expect((await verify(fresh, { 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    expect((await verify(fresh, { origin: 'https://evil.example', host: 'api.example.test' })).status).toBe(
      403,
    );
    // The refused request did not burn the link.
    expect((await verify(fresh)).status).toBe(200);
  });

  it('sends at most 5 links per address in 15 minutes, still answering 202', async () => {
    const other = await createUserWithPassword(db, names);
    for (let i = 0; i < 7; i++) expect((await requestLink(other.email)).status).toBe(202);
    expect((await outboxFiles()).filter((name) => name.endsWith(`-${other.email}.txt`))).toHaveLength(5);
  });

  it('serves a page at the link that posts the token only on a click', async () => {
    const page = await gateway.call({
      method: 'GET',
      resource: '/auth/magic-link',
      query: { token: 'psm_x' },
    });
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    expect(page.headers['content-security-policy']).toMatch(/script-src 'sha256-[A-Za-z0-9+/=]+'/);
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    expect(page.body).not.toContain('psm_x');
    expect(page.body).toContain("fetch('magic-link/verify'");
  });
});
