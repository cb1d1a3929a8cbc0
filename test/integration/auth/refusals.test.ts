import { beforeAll, describe, expect, it } from 'vitest';
import { CSRF_REFUSALS } from '../../../lambdas/auth/csrf.ts';
import {
  BROWSER_HEADERS,
  CookieJar,
  createUserWithPassword,
  setUpAuthEnvironment,
  TestGateway,
  type TestUser,
} from './gateway.ts';

// What a refused caller reads, from the authorizer's Deny (the gateway's 403) and from the
// handlers' own 401s: which rule refused it, what to send instead, and RFC 6750's challenge.

let gateway: TestGateway;
let alice: TestUser;
const HSTS = 'max-age=31536000; includeSubDomains';

beforeAll(async () => {
  const { db, names } = await setUpAuthEnvironment();
  alice = await createUserWithPassword(db, names);
  gateway = new TestGateway();
});

async function browserSession(): Promise<CookieJar> {
  const response = await gateway.call({
    method: 'POST',
    resource: '/auth/login',
    headers: BROWSER_HEADERS,
    body: { email: alice.email, password: alice.password },
  });
  expect(response.status).toBe(200);
  const jar = new CookieJar();
  jar.store(response.cookies);
  return jar;
}

describe('a CSRF refusal', () => {
  it('says which rule refused a cookie request and what a same-origin page sends, not “not allowed”', async () => {
    const jar = await browserSession();
    const post = (headers: Record<string, string>, body?: string) =>
      gateway.call({
        method: 'POST',
        resource: '/pipelines',
        headers: { cookie: jar.headerFor('/pipelines'), host: 'api.example.test', ...headers },
        ...(body === undefined ? {} : { body }),
      });

    const crossSite = await post(
      { 'sec-fetch-site': 'cross-site', 'content-type': 'application/json' },
      '{}',
    );
    const foreign = await post({ origin: 'https://evil.example', 'content-type': 'application/json' }, '{}');
    const form = await post({ 'content-type': 'application/x-www-form-urlencoded' }, 'name=x');
    const bodiless = await post({ 'content-type': '' });

    for (const [response, message] of [
      [crossSite, CSRF_REFUSALS.crossSite('cross-site')],
      [foreign, CSRF_REFUSALS.foreignOrigin()],
      [form, CSRF_REFUSALS.notJson('application/x-www-form-urlencoded')],
      [bodiless, CSRF_REFUSALS.noSameOriginSign()],
    ] as const) {
      expect(response).toMatchObject({
        status: 403,
        body: { error: 'FORBIDDEN', message },
        reachedHandler: false,
      });
      expect(response.headers['strict-transport-security']).toBe(HSTS);
    }
    expect(crossSite.body.message).toContain('Sec-Fetch-Site: same-origin');
    expect(bodiless.body.message).toContain('X-Requested-With');
  });

  it('reads the same from a handler that applies the rule itself (login)', async () => {
    const response = await gateway.call({
      method: 'POST',
      resource: '/auth/login',
      headers: { 'sec-fetch-site': 'cross-site' },
      body: { email: alice.email, password: alice.password },
    });

    expect(response).toMatchObject({
      status: 403,
      body: { error: 'FORBIDDEN', message: CSRF_REFUSALS.crossSite('cross-site') },
    });
  });
});

describe('a 401', () => {
  it('from the gateway challenges with Bearer', async () => {
    const response = await gateway.call({
      method: 'GET',
      resource: '/me',
      headers: { authorization: 'Bearer nope' },
    });

    expect(response.status).toBe(401);
    expect(response.headers['www-authenticate']).toBe('Bearer');
  });

  it('from a handler challenges with Bearer, and says invalid_token when a token was sent', async () => {
    const wrongPassword = await gateway.call({
      method: 'POST',
      resource: '/auth/login',
      headers: BROWSER_HEADERS,
      body: { email: alice.email, password: `${alice.password}!` },
    });
    const staleRefresh = await gateway.call({
      method: 'POST',
      resource: '/auth/refresh',
      headers: { ...BROWSER_HEADERS, cookie: `ps_refresh=psr_${'x'.repeat(36)}` },
    });

    expect(wrongPassword.status).toBe(401);
    expect(wrongPassword.headers['www-authenticate']).toBe('Bearer');
    expect(staleRefresh.status).toBe(401);
    expect(staleRefresh.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
    expect(staleRefresh.headers['strict-transport-security']).toBe(HSTS);
  });
});
