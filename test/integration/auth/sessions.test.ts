import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { REFRESH_REUSE_INTERVAL_MS } from '../../../lambdas/auth/sessions.ts';
import type { Clock } from '../../../lambdas/core/ports/common.ts';
import { logIn as logInOperation } from '../../../lambdas/operations/log-in.ts';
import { makeAuthRepository } from '../../../lambdas/wiring/repositories.ts';
import type { TableNames } from '../../../local/dynamodb.ts';
import { shapeMismatches } from '../../support/json-shape.ts';
import {
  BROWSER_HEADERS,
  CookieJar,
  createUserWithPassword,
  freshAuthorizer as newAuthorizer,
  parseSetCookie,
  setUpAuthEnvironment,
  TestGateway,
  type TestUser,
} from './gateway.ts';

let db: DynamoDBDocumentClient;
let names: TableNames;
let gateway: TestGateway;
let alice: TestUser;
let bob: TestUser;

/** A clock the test moves by hand. */
function manualClock(start = Date.now()): Clock & { advance(ms: number): void } {
  let now = start;
  return { now: () => new Date(now), advance: (ms) => (now += ms) };
}

beforeAll(async () => {
  ({ db, names } = await setUpAuthEnvironment());
  [alice, bob] = await Promise.all([
    createUserWithPassword(db, names),
    createUserWithPassword(db, names, 'member'),
  ]);
  gateway = new TestGateway();
});

async function logIn(user: TestUser, extra: object = {}, headers: Record<string, string> = BROWSER_HEADERS) {
  return gateway.call({
    method: 'POST',
    resource: '/auth/login',
    headers,
    body: { email: user.email, password: user.password, ...extra },
  });
}

/** Logs in with cookies and returns the browser's jar. */
async function browserSession(user: TestUser): Promise<CookieJar> {
  const response = await logIn(user);
  expect(response.status).toBe(200);
  const jar = new CookieJar();
  jar.store(response.cookies);
  return jar;
}

function getMe(headers: Record<string, string>) {
  return gateway.call({ method: 'GET', resource: '/me', headers });
}

describe('password login', () => {
  it('sets HttpOnly, Secure, SameSite=Strict cookies with narrow paths and no secret in the body', async () => {
    const response = await logIn(alice);

    expect(response.status).toBe(200);
    expect(response.body.session).toMatchObject({
      userId: alice.userId,
      teamId: alice.teamId,
      role: 'admin',
    });
    expect(response.body.accessToken).toBeUndefined();
    expect(response.body.refreshToken).toBeUndefined();
    expect(response.headers['cache-control']).toBe('no-store');
    const cookies = new Map(
      response.cookies.map((value) => [parseSetCookie(value).name, parseSetCookie(value)]),
    );
    expect([...cookies.keys()].sort()).toEqual(['ps_refresh', 'ps_session']);
    for (const cookie of cookies.values()) {
      expect(cookie.attributes.has('httponly')).toBe(true);
      expect(cookie.attributes.has('secure')).toBe(true);
      expect(cookie.attributes.get('samesite')).toBe('Strict');
      expect(cookie.attributes.has('domain')).toBe(false);
      expect(Number(cookie.attributes.get('max-age'))).toBeGreaterThan(0);
    }
    expect(cookies.get('ps_session')?.value).toMatch(/^pss_[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    expect(cookies.get('ps_session')?.attributes.get('path')).toBe('/');
    expect(cookies.get('ps_refresh')?.value).toMatch(/^psr_[0-9A-Za-z]{36}$/);
    expect(cookies.get('ps_refresh')?.attributes.get('path')).toBe('/auth/refresh');
  });

  it('answers a wrong password and an unknown email with the same 401, in about the same time', async () => {
    const wrongPassword = { email: alice.email, password: 'not the password at all' };
    const unknownEmail = { email: 'nobody-here@example.test', password: 'not the password at all' };
    const timings: Record<'wrongPassword' | 'unknownEmail', number[]> = {
      wrongPassword: [],
      unknownEmail: [],
    };
    const bodies = new Set<string>();
    // Interleaved, so that load from other test files affects both kinds alike.
    for (let i = 0; i < 3; i++) {
      for (const [kind, body] of [
        ['wrongPassword', wrongPassword],
        ['unknownEmail', { ...unknownEmail, email: `nobody-${i}@example.test` }],
      ] as const) {
        const started = performance.now();
        const response = await gateway.call({
          method: 'POST',
          resource: '/auth/login',
          headers: BROWSER_HEADERS,
          body,
        });
        timings[kind].push(performance.now() - started);
        expect(response.status).toBe(401);
        expect(response.cookies).toEqual([]);
        bodies.add(JSON.stringify(response.body));
      }
    }
    expect([...bodies]).toEqual([
      JSON.stringify({ error: 'UNAUTHORIZED', message: 'The email or password is incorrect.' }),
    ]);
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[1] as number;
    const [a, b] = [median(timings.wrongPassword), median(timings.unknownEmail)];
    // Both run one full scrypt verification; without the dummy hash the unknown email would be
    // ~100x faster. The bound is loose on purpose: this is not a speed target, and CI is noisy.
    expect(Math.min(a, b) / Math.max(a, b)).toBeGreaterThan(0.2);
    // The successful login clears the counter the failures above left.
    expect((await logIn(alice)).status).toBe(200);
  });

  it('throttles an email after 5 attempts with 429 and Retry-After, and lets it in again after the window', async () => {
    const user = await createUserWithPassword(db, names);
    const clock = manualClock();
    const { makeLogInHandler } = await import('../../../lambdas/operations/log-in.ts');
    const throttled = new TestGateway();
    throttled.override('log-in', makeLogInHandler(clock));
    const attempt = (password: string, email = user.email) =>
      throttled.call({
        method: 'POST',
        resource: '/auth/login',
        headers: BROWSER_HEADERS,
        body: { email, password },
      });

    for (let i = 0; i < 5; i++) expect((await attempt(`wrong password ${i}`)).status).toBe(401);
    const refused = await attempt(user.password);
    expect(refused).toMatchObject({ status: 429, body: { error: 'RATE_LIMITED' } });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(15 * 60);
    // Other addresses are unaffected; refused attempts do not extend the window.
    expect((await attempt('wrong', alice.email)).status).toBe(401);
    clock.advance(14 * 60_000);
    expect((await attempt(user.password)).status).toBe(429);

    clock.advance(60_000 + 1);
    const recovered = await attempt(user.password);
    expect(recovered.status).toBe(200);
  });

  it('refuses a weak-looking request with 400 and a cookie login without the CSRF header with 403', async () => {
    const invalid = await gateway.call({
      method: 'POST',
      resource: '/auth/login',
      headers: BROWSER_HEADERS,
      body: { email: alice.email },
    });
    expect(invalid).toMatchObject({ status: 400, body: { error: 'VALIDATION_ERROR' } });
    const forged = await logIn(alice, {}, { 'sec-fetch-site': 'cross-site' });
    expect(forged).toMatchObject({ status: 403, body: { error: 'FORBIDDEN' } });
    expect(forged.cookies).toEqual([]);
  });

  it('logs in exactly as the API document shows: Content-Type: application/json, {email, password}, cookies set', async () => {
    const response = await gateway.call({
      method: 'POST',
      resource: '/auth/login',
      headers: { 'content-type': 'application/json' },
      body: { email: alice.email, password: alice.password },
    });

    expect(response.status).toBe(200);
    expect(response.cookies.map((cookie) => parseSetCookie(cookie).name)).toContain('ps_session');
  });

  it('returns the tokens in the body, and sets no cookie, with delivery "body"', async () => {
    const response = await logIn(bob, { delivery: 'body' }, {});
    expect(response.status).toBe(200);
    expect(response.cookies).toEqual([]);
    expect(response.body.accessToken).toMatch(/^pss_/);
    expect(response.body.refreshToken).toMatch(/^psr_/);
  });
});

describe('the login answer', () => {
  it('has the shape GET /openapi.json documents, with cookie and with body delivery', async () => {
    const documented = logInOperation.response.schema;
    expect(documented).toBeDefined();
    for (const response of [await logIn(alice), await logIn(bob, { delivery: 'body' }, {})]) {
      expect(response.status).toBe(200);
      expect(shapeMismatches(documented as object, response.body)).toEqual([]);
    }
  });
});

describe('using a session', () => {
  it('is accepted as the cookie and as a Bearer, and GET /me says how', async () => {
    const jar = await browserSession(alice);
    const viaCookie = await getMe({ cookie: jar.headerFor('/me') });
    expect(viaCookie.status).toBe(200);
    expect(viaCookie.body).toMatchObject({
      user: { id: alice.userId, email: alice.email },
      teams: [{ id: alice.teamId, role: 'admin' }],
      authentication: {
        method: 'session',
        teamId: alice.teamId,
        role: 'admin',
        sessionId: expect.any(String),
      },
    });
    expect(viaCookie.body.authentication.tokenId).toBeUndefined();

    const viaBearer = await getMe({ authorization: `Bearer ${jar.get('ps_session')}` });
    expect(viaBearer.body.authentication).toEqual(viaCookie.body.authentication);

    const viaApiToken = await getMe({ authorization: `Bearer ${alice.apiToken}` });
    expect(viaApiToken.body.authentication).toEqual({
      method: 'api-token',
      teamId: alice.teamId,
      role: 'admin',
      tokenId: alice.tokenId,
    });
  });

  it('refuses a cookie-authenticated state change from another origin or with a non-JSON body; a Bearer needs none', async () => {
    const jar = await browserSession(alice);
    const body = { name: 'csrf target', slots: [{ id: 'm', name: 'model', kind: 'model', settings: {} }] };
    const post = (headers: Record<string, string>, payload: object = body) =>
      gateway.call({
        method: 'POST',
        resource: '/pipelines',
        headers: { cookie: jar.headerFor('/pipelines'), host: 'api.example.test', ...headers },
        body: payload,
      });
    const forged: Record<string, string>[] = [
      { origin: 'https://evil.example' },
      { origin: 'null' },
      { origin: 'https://app.example.test' },
      { 'sec-fetch-site': 'same-site', 'x-requested-with': 'fetch' },
      { 'sec-fetch-site': 'cross-site' },
      // What a cross-site form can send without a preflight.
      { 'content-type': 'application/x-www-form-urlencoded' },
      { 'content-type': 'text/plain' },
      { 'content-type': 'multipart/form-data; boundary=x' },
    ];
    for (const headers of forged) {
      expect(await post(headers), JSON.stringify(headers)).toMatchObject({
        status: 403,
        body: { error: 'FORBIDDEN' },
        reachedHandler: false,
      });
    }
    // A same-origin page, and a script that holds the cookie and sends JSON, may.
    expect((await post({ origin: 'https://api.example.test', 'sec-fetch-site': 'same-origin' })).status).toBe(
      201,
    );
    expect((await post({ 'content-type': 'application/json; charset=utf-8' })).status).toBe(201);
    // Without a body, only positive evidence of the same origin lets a cookie change state.
    const bodiless = (headers: Record<string, string>) =>
      gateway.call({
        method: 'POST',
        resource: '/pipelines',
        headers: {
          cookie: jar.headerFor('/pipelines'),
          host: 'api.example.test',
          'content-type': '',
          ...headers,
        },
      });
    expect(await bodiless({})).toMatchObject({ status: 403, reachedHandler: false });
    expect((await bodiless({ origin: 'https://api.example.test' })).reachedHandler).toBe(true);
    expect((await bodiless({ 'x-requested-with': 'fetch' })).reachedHandler).toBe(true);
    // Reading needs nothing: GET has no side effects.
    expect(
      (
        await gateway.call({
          method: 'GET',
          resource: '/pipelines',
          headers: { cookie: jar.headerFor('/pipelines') },
        })
      ).status,
    ).toBe(200);

    const withHeader = await gateway.call({
      method: 'POST',
      resource: '/pipelines',
      headers: { cookie: jar.headerFor('/pipelines'), ...BROWSER_HEADERS },
      body,
    });
    expect(withHeader.status).toBe(201);
    const bearer = await gateway.call({
      method: 'POST',
      resource: '/pipelines',
      headers: { authorization: `Bearer ${jar.get('ps_session')}` },
      body,
    });
    expect(bearer.status).toBe(201);
    const apiToken = await gateway.call({
      method: 'POST',
      resource: '/pipelines',
      headers: { authorization: `Bearer ${alice.apiToken}` },
      body,
    });
    expect(apiToken.status).toBe(201);
  });

  it('answers 401 for a forged, tampered or garbage session token', async () => {
    const jar = await browserSession(alice);
    const token = jar.get('ps_session') as string;
    const [payload, signature] = token.slice(4).split('.') as [string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    const otherUser = Buffer.from(JSON.stringify({ ...claims, uid: bob.userId })).toString('base64url');
    for (const forged of [
      `pss_${otherUser}.${signature}`,
      `${token.slice(0, -2)}AA`,
      'pss_garbage',
      `pss_${'A'.repeat(5000)}.${signature}`,
    ]) {
      expect((await getMe({ authorization: `Bearer ${forged}` })).status).toBe(401);
      expect((await getMe({ cookie: `ps_session=${forged}` })).status).toBe(401);
    }
    // An API token in the session cookie is not a session.
    expect((await getMe({ cookie: `ps_session=${alice.apiToken}` })).status).toBe(401);
  });
});

describe('refresh', () => {
  it('rotates the refresh token, and a reused one revokes the whole session family', async () => {
    const jar = await browserSession(alice);
    const firstRefresh = jar.get('ps_refresh') as string;
    const refresh = (cookie: string, headers: Record<string, string> = BROWSER_HEADERS) =>
      gateway.call({ method: 'POST', resource: '/auth/refresh', headers: { cookie, ...headers } });

    // Only the refresh path receives the refresh cookie.
    expect(jar.headerFor('/me')).not.toContain('ps_refresh');
    expect((await refresh(jar.headerFor('/auth/refresh'), {})).status).toBe(403);

    const rotated = await refresh(jar.headerFor('/auth/refresh'));
    expect(rotated.status).toBe(200);
    jar.store(rotated.cookies);
    const secondRefresh = jar.get('ps_refresh') as string;
    expect(secondRefresh).not.toBe(firstRefresh);
    expect(jar.get('ps_session')).toMatch(/^pss_/);
    expect((await getMe({ cookie: jar.headerFor('/me') })).status).toBe(200);

    // A second tab that refreshed with the same token a moment later gets the very same pair.
    const repeated = await refresh(`ps_refresh=${firstRefresh}`);
    expect(repeated.status).toBe(200);
    expect(repeated.cookies.map(parseSetCookie).map((cookie) => cookie.value)).toEqual(
      rotated.cookies.map(parseSetCookie).map((cookie) => cookie.value),
    );

    // An attacker replays the first refresh token after the reuse interval: refused, and the
    // whole family is revoked.
    const later = manualClock(Date.now() + REFRESH_REUSE_INTERVAL_MS + 1_000);
    const { makeRefreshHandler } = await import('../../../lambdas/operations/refresh-session.ts');
    const afterInterval = new TestGateway();
    afterInterval.override('refresh-session', makeRefreshHandler(later));
    const replay = await afterInterval.call({
      method: 'POST',
      resource: '/auth/refresh',
      headers: { cookie: `ps_refresh=${firstRefresh}`, ...BROWSER_HEADERS },
    });
    expect(replay).toMatchObject({ status: 401, body: { error: 'UNAUTHORIZED' } });
    expect((await refresh(jar.headerFor('/auth/refresh'))).status).toBe(401);
    // The very next request with the session's access token is refused, warm authorizer or not.
    expect((await getMe({ cookie: jar.headerFor('/me') })).status).toBe(401);
    const auth = makeAuthRepository(db, names.Auth, names.Events);
    const sessionId = rotated.body.session.id as string;
    expect(await auth.getSession(sessionId)).toMatchObject({ revokedReason: 'refresh-token-reuse' });
    // The access token of the family is refused too (a fresh authorizer: no cached decision).
    const fresh = gateway.withAuthorizer(await freshAuthorizer());
    expect(
      (await fresh.call({ method: 'GET', resource: '/me', headers: { cookie: jar.headerFor('/me') } }))
        .status,
    ).toBe(401);
  });

  it('lets two tabs refresh at the same moment: both get the same new pair, the session lives on', async () => {
    const jar = await browserSession(alice);
    const both = await Promise.all(
      [1, 2].map(() =>
        gateway.call({
          method: 'POST',
          resource: '/auth/refresh',
          headers: { cookie: jar.headerFor('/auth/refresh'), ...BROWSER_HEADERS },
        }),
      ),
    );

    expect(both.map((response) => response.status)).toEqual([200, 200]);
    const values = both.map((response) => response.cookies.map((cookie) => parseSetCookie(cookie).value));
    expect(values[0]).toEqual(values[1]);
    jar.store(both[0]?.cookies ?? []);
    expect((await getMe({ cookie: jar.headerFor('/me') })).status).toBe(200);
  });

  it('works with the refresh token in the body (no cookie, no CSRF header) and can switch team', async () => {
    const login = await logIn(bob, { delivery: 'body' }, {});
    const auth = makeAuthRepository(db, names.Auth, names.Events);
    await auth.putMembership({
      userId: bob.userId,
      teamId: alice.teamId,
      role: 'viewer',
      createdAt: new Date().toISOString(),
    });

    const refreshed = await gateway.call({
      method: 'POST',
      resource: '/auth/refresh',
      body: { refreshToken: login.body.refreshToken, teamId: alice.teamId },
    });
    expect(refreshed.status).toBe(200);
    expect(refreshed.cookies).toEqual([]);
    expect(refreshed.body.session).toMatchObject({ teamId: alice.teamId, role: 'viewer' });
    const me = await getMe({ authorization: `Bearer ${refreshed.body.accessToken}` });
    expect(me.body.authentication).toMatchObject({ method: 'session', teamId: alice.teamId, role: 'viewer' });

    const notMine = await gateway.call({
      method: 'POST',
      resource: '/auth/refresh',
      body: { refreshToken: refreshed.body.refreshToken, teamId: 'no-such-team' },
    });
    expect(notMine).toMatchObject({ status: 403, body: { error: 'FORBIDDEN' } });
    const missing = await gateway.call({
      method: 'POST',
      resource: '/auth/refresh',
      headers: BROWSER_HEADERS,
    });
    expect(missing.status).toBe(401);
  });

  it('starts a session on the team asked for at login, and refuses a team the user is not in', async () => {
    const chosen = await logIn(bob, { teamId: alice.teamId, delivery: 'body' }, {});
    expect(chosen.body.session).toMatchObject({ teamId: alice.teamId, role: 'viewer' });
    const refused = await logIn(bob, { teamId: 'someone-elses-team', delivery: 'body' }, {});
    expect(refused).toMatchObject({ status: 403, body: { error: 'FORBIDDEN' } });
    const defaulted = await logIn(bob, { delivery: 'body' }, {});
    expect(defaulted.body.session.teamId).toBe(bob.teamId);
  });
});

function freshAuthorizer(clock?: Clock) {
  return newAuthorizer(db, names, clock);
}

describe('logout', () => {
  it('ends the session: the very next request is 401, in a warm authorizer as in a cold one', async () => {
    const clock = manualClock();
    const warm = gateway.withAuthorizer(await freshAuthorizer(clock));
    const jar = await browserSession(alice);
    const me = () => warm.call({ method: 'GET', resource: '/me', headers: { cookie: jar.headerFor('/me') } });
    expect((await me()).status).toBe(200);

    const cookieWithoutHeader = await gateway.call({
      method: 'POST',
      resource: '/auth/logout',
      headers: { cookie: jar.headerFor('/auth/logout') },
    });
    expect(cookieWithoutHeader.status).toBe(403);
    const loggedOut = await gateway.call({
      method: 'POST',
      resource: '/auth/logout',
      headers: { cookie: jar.headerFor('/auth/logout'), ...BROWSER_HEADERS },
    });
    expect(loggedOut.status).toBe(204);
    const cleared = loggedOut.cookies.map(parseSetCookie);
    expect(cleared.map((cookie) => [cookie.name, cookie.value, cookie.attributes.get('max-age')])).toEqual([
      ['ps_session', '', '0'],
      ['ps_refresh', '', '0'],
    ]);
    const stolenCookies = jar.headerFor('/me');
    const stolenRefresh = jar.headerFor('/auth/refresh');

    // A cold authorizer (another container) refuses at once.
    const cold = gateway.withAuthorizer(await freshAuthorizer(clock));
    expect(
      (await cold.call({ method: 'GET', resource: '/me', headers: { cookie: stolenCookies } })).status,
    ).toBe(401);
    // The warm one that served the session a moment ago refuses it too: sessions are never cached.
    expect((await me()).status).toBe(401);
    // The refresh token died with the session.
    const refresh = await gateway.call({
      method: 'POST',
      resource: '/auth/refresh',
      headers: { cookie: stolenRefresh, ...BROWSER_HEADERS },
    });
    expect(refresh.status).toBe(401);
  });

  it('works with a Bearer access token, and answers 204 when there is nothing to end', async () => {
    const login = await logIn(bob, { delivery: 'body' }, {});
    const bearer = { authorization: `Bearer ${login.body.accessToken}` };
    expect((await gateway.call({ method: 'POST', resource: '/auth/logout', headers: bearer })).status).toBe(
      204,
    );
    const cold = gateway.withAuthorizer(await freshAuthorizer());
    expect((await cold.call({ method: 'GET', resource: '/me', headers: bearer })).status).toBe(401);
    expect((await gateway.call({ method: 'POST', resource: '/auth/logout' })).status).toBe(204);
  });
});

describe('changing the password', () => {
  it('ends every other session of the user on a password change, however many (here 130)', async () => {
    const user = await createUserWithPassword(db, names);
    const jar = await browserSession(user);
    const auth = makeAuthRepository(db, names.Auth, names.Events);
    const now = new Date();
    const others = Array.from({ length: 130 }, (_, index) => `bulk-session-${user.userId}-${index}`);
    for (const sessionId of others) {
      await auth.createSession(
        {
          sessionId,
          userId: user.userId,
          teamId: user.teamId,
          method: 'password',
          createdAt: new Date(now.getTime() - 60_000).toISOString(),
          expiresAt: new Date(now.getTime() + 86_400_000).toISOString(),
        },
        {
          tokenHash: `hash-${sessionId}`,
          sessionId,
          createdAt: now.toISOString(),
          expiresAt: new Date(now.getTime() + 86_400_000).toISOString(),
        },
      );
    }

    const changed = await gateway.call({
      method: 'POST',
      resource: '/me/password',
      headers: { cookie: jar.headerFor('/me/password'), ...BROWSER_HEADERS },
      body: { currentPassword: user.password, newPassword: 'a much better passphrase' },
    });

    expect(changed.status).toBe(204);
    const sessions = await Promise.all(others.map((sessionId) => auth.getSession(sessionId)));
    expect(sessions.filter((session) => session?.revokedReason === 'password-changed')).toHaveLength(130);
    expect((await getMe({ cookie: jar.headerFor('/me') })).status).toBe(200);
  });

  const changePassword = (jar: CookieJar, body: object) =>
    gateway.call({
      method: 'POST',
      resource: '/me/password',
      headers: { cookie: jar.headerFor('/me/password'), ...BROWSER_HEADERS },
      body,
    });

  it("is not blocked by a stranger's failed logins for the address; wrong current passwords have their own limit", async () => {
    const user = await createUserWithPassword(db, names);
    const jar = await browserSession(user);
    for (let i = 0; i < 5; i++)
      expect((await logIn({ ...user, password: `a stranger's guess ${i}` })).status).toBe(401);
    expect((await logIn(user)).status).toBe(429);

    const changed = await changePassword(jar, {
      currentPassword: user.password,
      newPassword: 'a much better passphrase',
    });
    expect(changed.status).toBe(204);

    for (let i = 0; i < 5; i++) {
      const wrong = await changePassword(jar, {
        currentPassword: `not it ${i}`,
        newPassword: 'yet another passphrase',
      });
      expect(wrong.status).toBe(403);
    }
    const throttled = await changePassword(jar, {
      currentPassword: 'a much better passphrase',
      newPassword: 'yet another passphrase',
    });
    expect(throttled).toMatchObject({ status: 429, body: { error: 'RATE_LIMITED' } });
    expect(Number(throttled.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('keeps the API tokens working, unless revokeApiTokens asks to revoke them all', async () => {
    const user = await createUserWithPassword(db, names);
    const jar = await browserSession(user);
    const withToken = async () =>
      (
        await gateway.withAuthorizer(await freshAuthorizer()).call({
          method: 'GET',
          resource: '/me',
          headers: { authorization: `Bearer ${user.apiToken}` },
        })
      ).status;

    expect(
      (await changePassword(jar, { currentPassword: user.password, newPassword: 'a much better passphrase' }))
        .status,
    ).toBe(204);
    expect(await withToken()).toBe(200);

    const revoking = await changePassword(jar, {
      currentPassword: 'a much better passphrase',
      newPassword: 'yet another passphrase',
      revokeApiTokens: true,
    });
    expect(revoking.status).toBe(204);
    expect(await withToken()).toBe(401);
    const listed = await gateway.call({
      method: 'GET',
      resource: '/api-tokens',
      headers: { cookie: jar.headerFor('/api-tokens') },
    });
    expect(listed.body.items).toEqual([
      expect.objectContaining({ id: user.tokenId, revokedAt: expect.any(String) }),
    ]);
  });

  it('refuses weak passwords with a 400 naming the rules, and ends the other sessions on success', async () => {
    const user = await createUserWithPassword(db, names);
    const [first, second] = [await browserSession(user), await browserSession(user)];
    const change = (jar: CookieJar, body: object) =>
      gateway.call({
        method: 'POST',
        resource: '/me/password',
        headers: { cookie: jar.headerFor('/me/password'), ...BROWSER_HEADERS },
        body,
      });

    const weak = await change(first, { currentPassword: user.password, newPassword: 'short' });
    expect(weak).toMatchObject({ status: 400, body: { error: 'VALIDATION_ERROR' } });
    expect(weak.body.details).toContainEqual({
      path: 'newPassword',
      message: 'must have at least 12 characters',
    });
    const containsEmail = await change(first, {
      currentPassword: user.password,
      newPassword: `${user.email.split('@')[0]}-and-more`,
    });
    expect(containsEmail.status).toBe(400);
    const wrongCurrent = await change(first, {
      currentPassword: 'not it at all',
      newPassword: 'a much better passphrase',
    });
    expect(wrongCurrent).toMatchObject({ status: 403, body: { error: 'FORBIDDEN' } });
    const withToken = await gateway.call({
      method: 'POST',
      resource: '/me/password',
      headers: { authorization: `Bearer ${user.apiToken}` },
      body: { currentPassword: user.password, newPassword: 'a much better passphrase' },
    });
    expect(withToken.status).toBe(403);

    expect(
      (await change(first, { currentPassword: user.password, newPassword: 'a much better passphrase' }))
        .status,
    ).toBe(204);
    const cold = gateway.withAuthorizer(await freshAuthorizer());
    expect(
      (await cold.call({ method: 'GET', resource: '/me', headers: { cookie: first.headerFor('/me') } }))
        .status,
    ).toBe(200);
    expect(
      (await cold.call({ method: 'GET', resource: '/me', headers: { cookie: second.headerFor('/me') } }))
        .status,
    ).toBe(401);
    const relogin = await gateway.call({
      method: 'POST',
      resource: '/auth/login',
      headers: BROWSER_HEADERS,
      body: { email: user.email, password: 'a much better passphrase' },
    });
    expect(relogin.status).toBe(200);
  });
});
