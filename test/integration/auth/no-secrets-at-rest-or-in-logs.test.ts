import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { type DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { TableNames } from '../../../local/dynamodb.ts';
import { DEMO_SLOTS } from '../../../local/seed.ts';
import {
  BROWSER_HEADERS,
  CookieJar,
  createUserWithPassword,
  freshAuthorizer,
  setUpAuthEnvironment,
  TestGateway,
} from './gateway.ts';

/**
 * Runs every credential flow once (password login with a failure, cookie and bearer sessions,
 * refresh and refresh-token reuse, API token create/use/revoke, magic link with replay, password
 * change, logout) with logging at DEBUG, capturing everything written to stdout and stderr; then
 * reads every item of every table. No secret may appear in either.
 */
const sqs = mockClient(SQSClient);
let db: DynamoDBDocumentClient;
let names: TableNames;
let outbox: string;
/** Every secret the flows handled, and the parts of them that would be as bad to leak. */
const secrets = new Set<string>();
const captured: string[] = [];
const restore: Array<() => void> = [];

function remember(secret: string | undefined): void {
  if (!secret) return;
  secrets.add(secret);
  // The random part of a prefixed token, and the signature of a session token.
  if (/^ps[amr]_/.test(secret)) secrets.add(secret.slice(4, 34));
  if (secret.startsWith('pss_')) secrets.add(secret.split('.')[1] as string);
}

function captureOutput(): void {
  for (const stream of [process.stdout, process.stderr]) {
    const original = stream.write;
    stream.write = ((chunk: unknown) => {
      captured.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8'));
      return true;
    }) as typeof stream.write;
    restore.push(() => {
      stream.write = original;
    });
  }
  for (const method of ['log', 'info', 'warn', 'error', 'debug'] as const) {
    const spy = vi.spyOn(console, method).mockImplementation((...args: unknown[]) => {
      captured.push(args.map(String).join(' '));
    });
    restore.push(() => spy.mockRestore());
  }
}

async function runEveryFlow(): Promise<void> {
  const gateway = new TestGateway();
  const user = await createUserWithPassword(db, names);
  [user.password, user.apiToken].forEach(remember);
  const browser = new CookieJar();
  const call = gateway.call.bind(gateway);

  const wrongPassword = 'an incorrect password guess';
  remember(wrongPassword);
  await call({
    method: 'POST',
    resource: '/auth/login',
    headers: BROWSER_HEADERS,
    body: { email: user.email, password: wrongPassword },
  });
  const login = await call({
    method: 'POST',
    resource: '/auth/login',
    headers: BROWSER_HEADERS,
    body: { email: user.email, password: user.password },
  });
  browser.store(login.cookies);
  remember(browser.get('ps_session'));
  remember(browser.get('ps_refresh'));
  const firstRefresh = browser.get('ps_refresh') as string;

  await call({ method: 'GET', resource: '/me', headers: { cookie: browser.headerFor('/me') } });
  await call({
    method: 'POST',
    resource: '/pipelines',
    // A forged cross-origin request: the authorizer denies it and logs why.
    headers: { cookie: browser.headerFor('/pipelines'), origin: 'https://evil.example' },
    body: { name: 'csrf', slots: DEMO_SLOTS },
  });
  const pipeline = await call({
    method: 'POST',
    resource: '/pipelines',
    headers: { cookie: browser.headerFor('/pipelines'), ...BROWSER_HEADERS },
    body: { name: 'bot', slots: DEMO_SLOTS },
  });
  await call({
    method: 'POST',
    resource: '/pipelines/{pipelineId}/synthesize',
    pathParameters: { pipelineId: pipeline.body.id },
    headers: { cookie: browser.headerFor('/pipelines'), ...BROWSER_HEADERS },
    body: {},
  });

  const refreshed = await call({
    method: 'POST',
    resource: '/auth/refresh',
    headers: { cookie: browser.headerFor('/auth/refresh'), ...BROWSER_HEADERS },
  });
  browser.store(refreshed.cookies);
  remember(browser.get('ps_session'));
  remember(browser.get('ps_refresh'));

  const bearerLogin = await call({
    method: 'POST',
    resource: '/auth/login',
    body: { email: user.email, password: user.password, delivery: 'body' },
  });
  remember(bearerLogin.body.accessToken);
  remember(bearerLogin.body.refreshToken);
  const bearer = { authorization: `Bearer ${bearerLogin.body.accessToken}` };
  const created = await call({
    method: 'POST',
    resource: '/api-tokens',
    headers: bearer,
    body: { name: 'ci', teamId: user.teamId },
  });
  remember(created.body.token);
  await call({
    method: 'GET',
    resource: '/pipelines',
    headers: { authorization: `Bearer ${created.body.token}` },
  });
  await call({ method: 'GET', resource: '/api-tokens', headers: bearer });
  await call({
    method: 'DELETE',
    resource: '/api-tokens/{id}',
    pathParameters: { id: created.body.id },
    headers: bearer,
  });
  const cold = gateway.withAuthorizer(await freshAuthorizer(db, names));
  await cold.call({
    method: 'GET',
    resource: '/pipelines',
    headers: { authorization: `Bearer ${created.body.token}` },
  });
  const rotated = await call({
    method: 'POST',
    resource: '/auth/refresh',
    body: { refreshToken: bearerLogin.body.refreshToken },
  });
  remember(rotated.body.accessToken);
  remember(rotated.body.refreshToken);

  // The first browser refresh token again, within the reuse interval: the same pair, logged.
  await call({
    method: 'POST',
    resource: '/auth/refresh',
    headers: { cookie: `ps_refresh=${firstRefresh}`, ...BROWSER_HEADERS },
  });

  await call({ method: 'POST', resource: '/auth/magic-link', body: { email: user.email } });
  await call({ method: 'POST', resource: '/auth/magic-link', body: { email: 'unknown@example.test' } });
  const [file] = (await readdir(outbox)).filter((name) => name.endsWith(`-${user.email}.txt`));
  const magicToken = /token=(psm_[0-9A-Za-z]+)/.exec(
    await readFile(path.join(outbox, file as string), 'utf8'),
  )?.[1] as string;
  remember(magicToken);
  const magic = await call({
    method: 'POST',
    resource: '/auth/magic-link/verify',
    headers: BROWSER_HEADERS,
    body: { token: magicToken },
  });
  const magicBrowser = new CookieJar();
  magicBrowser.store(magic.cookies);
  remember(magicBrowser.get('ps_session'));
  remember(magicBrowser.get('ps_refresh'));
  await call({
    method: 'POST',
    resource: '/auth/magic-link/verify',
    headers: BROWSER_HEADERS,
    body: { token: magicToken },
  });

  const newPassword = 'a brand new passphrase for the test';
  remember(newPassword);
  const passwordChange = { cookie: magicBrowser.headerFor('/me/password'), ...BROWSER_HEADERS };
  await call({
    method: 'POST',
    resource: '/me/password',
    headers: passwordChange,
    body: { newPassword: 'weak' },
  });
  // Changing an existing password needs the current one, in a magic-link session too.
  await call({
    method: 'POST',
    resource: '/me/password',
    headers: passwordChange,
    body: { currentPassword: user.password, newPassword },
  });

  await call({
    method: 'POST',
    resource: '/auth/logout',
    headers: { cookie: magicBrowser.headerFor('/auth/logout'), ...BROWSER_HEADERS },
  });
  await call({ method: 'POST', resource: '/auth/logout', headers: bearer });
  await call({
    method: 'GET',
    resource: '/me',
    headers: { authorization: 'Bearer psa_definitely-not-a-token' },
  });
}

beforeAll(async () => {
  ({ db, names, outbox } = await setUpAuthEnvironment({ POWERTOOLS_LOG_LEVEL: 'DEBUG' }));
  sqs.on(SendMessageCommand).resolves({ MessageId: 'm-1' });
  captureOutput();
  try {
    await runEveryFlow();
  } finally {
    for (const undo of restore.splice(0).reverse()) undo();
  }
}, 120_000);

afterAll(() => {
  for (const undo of restore.splice(0).reverse()) undo();
});

describe('after every credential flow', () => {
  it('handled the secrets the assertions look for', () => {
    // Passwords, API tokens, access and refresh tokens, the magic link: the flows really ran.
    expect(secrets.size).toBeGreaterThan(20);
    expect([...secrets].some((secret) => secret.startsWith('psm_'))).toBe(true);
  });

  it('stores no password, API token, session token, refresh token or magic-link token in any table', async () => {
    const items: Record<string, unknown>[] = [];
    for (const tableName of Object.values(names)) {
      let startKey: Record<string, unknown> | undefined;
      do {
        const page = await db.send(new ScanCommand({ TableName: tableName, ExclusiveStartKey: startKey }));
        items.push(...(page.Items ?? []));
        startKey = page.LastEvaluatedKey;
      } while (startKey);
    }
    const dump = JSON.stringify(items);
    expect(items.length).toBeGreaterThan(20);
    expect(items.some((item) => String(item.pk).startsWith('SESSION#'))).toBe(true);
    expect(items.some((item) => String(item.pk).startsWith('REFRESH#'))).toBe(true);
    for (const secret of secrets)
      expect(dump.includes(secret), 'a secret is stored in plain text').toBe(false);
    for (const item of items.filter((candidate) => typeof candidate.passwordHash === 'string')) {
      expect(item.passwordHash).toMatch(/^scrypt\$131072\$8\$1\$/);
    }
  });

  it('logged the flows without any token, password or cookie', () => {
    const output = captured.join('\n');
    // Logging was on: the audit trail of the flows is there.
    for (const message of [
      'session started',
      'refresh repeated within the reuse interval',
      'credential refused',
      'request denied',
      'password changed',
    ]) {
      expect(output).toContain(message);
    }
    for (const secret of secrets) expect(output.includes(secret), 'a secret was logged').toBe(false);
    expect(output).not.toMatch(/ps_session=|ps_refresh=|Bearer /i);
    expect(output).not.toMatch(/ps[asmr]_[0-9A-Za-z]{20}/);
  });
});
