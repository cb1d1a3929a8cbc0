import { describe, expect, it } from 'vitest';
import { csrfRefusal } from '../../../lambdas/auth/csrf.ts';
import { parseCookieHeader, serializeCookie } from '../../../lambdas/http/cookies.ts';
import {
  basePathOf,
  clearedSessionCookies,
  presentedCredential,
  sessionCookies,
} from '../../../lambdas/http/session-cookies.ts';

const headersOf = (headers: Record<string, string>) => (name: string) =>
  Object.entries(headers).find(([key]) => key.toLowerCase() === name.toLowerCase())?.[1];

describe('the CSRF rule', () => {
  it('lets safe methods through and requires X-Requested-With on state-changing ones', () => {
    expect(csrfRefusal('GET', headersOf({}))).toBeNull();
    expect(csrfRefusal('POST', headersOf({}))).toMatch(/X-Requested-With/);
    expect(csrfRefusal('DELETE', headersOf({ 'X-Requested-With': ' ' }))).toMatch(/X-Requested-With/);
    expect(csrfRefusal('POST', headersOf({ 'X-Requested-With': 'fetch' }))).toBeNull();
  });

  it('refuses cross-site and same-site (sibling origin) Fetch Metadata even with the header', () => {
    for (const site of ['cross-site', 'same-site']) {
      expect(
        csrfRefusal('POST', headersOf({ 'x-requested-with': 'fetch', 'sec-fetch-site': site })),
      ).toContain(site);
    }
    for (const site of ['same-origin', 'none']) {
      expect(
        csrfRefusal('POST', headersOf({ 'x-requested-with': 'fetch', 'sec-fetch-site': site })),
      ).toBeNull();
    }
  });
});

describe('cookies', () => {
  it('parses a Cookie header, first occurrence wins, quotes removed', () => {
    const cookies = parseCookieHeader('a=1; b="two"; a=3; broken; =x; c=');
    expect([...cookies]).toEqual([
      ['a', '1'],
      ['b', 'two'],
      ['c', ''],
    ]);
  });

  it('serializes Set-Cookie and refuses values a browser would misread', () => {
    const options = {
      path: '/',
      maxAgeSeconds: 60,
      httpOnly: true,
      secure: true,
      sameSite: 'Strict',
    } as const;
    expect(serializeCookie('n', 'v', options)).toBe(
      'n=v; Path=/; Max-Age=60; HttpOnly; Secure; SameSite=Strict',
    );
    expect(() => serializeCookie('n', 'a;b', options)).toThrow();
    expect(() => serializeCookie('n v', 'x', options)).toThrow();
    expect(() => serializeCookie('n', 'x', { ...options, path: '/a;b' })).toThrow();
  });

  it('scopes the session cookies to the stage on execute-api, and to nothing locally', () => {
    const onAws = {
      path: '/me',
      requestContext: {
        path: '/prod/me',
        stage: 'prod',
        domainName: 'abc123.execute-api.eu-west-1.amazonaws.com',
      },
    };
    const local = {
      path: '/me',
      requestContext: { path: '/local/me', stage: 'local', domainName: '127.0.0.1:3000' },
    };
    const customDomain = {
      path: '/me',
      requestContext: { path: '/v1/me', stage: 'prod', domainName: 'api.example.com' },
    };
    expect(basePathOf(onAws)).toBe('/prod');
    expect(basePathOf(local)).toBe('');
    expect(basePathOf(customDomain)).toBe('/v1');

    const session = {
      sessionId: 's',
      userId: 'u',
      teamId: 't',
      role: 'admin' as const,
      accessToken: 'pss_a.b',
      accessTokenExpiresAt: '2026-11-22T12:15:00.000Z',
      refreshToken: 'psr_x',
      refreshTokenExpiresAt: '2026-11-29T12:00:00.000Z',
      expiresAt: '2026-12-22T12:00:00.000Z',
    };
    const [access, refresh] = sessionCookies(
      session,
      { base: '/prod', refresh: '/auth/refresh' },
      new Date('2026-11-22T12:00:00.000Z'),
    );
    expect(access).toBe('ps_session=pss_a.b; Path=/prod/; Max-Age=604800; HttpOnly; Secure; SameSite=Strict');
    expect(refresh).toBe(
      'ps_refresh=psr_x; Path=/prod/auth/refresh; Max-Age=604800; HttpOnly; Secure; SameSite=Strict',
    );
    expect(clearedSessionCookies({ base: '', refresh: '/auth/refresh' })).toEqual([
      'ps_session=; Path=/; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; Secure; SameSite=Strict',
      'ps_refresh=; Path=/auth/refresh; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; Secure; SameSite=Strict',
    ]);
  });
});

describe('the presented credential', () => {
  it('prefers Authorization: Bearer over the cookie, and never falls back from a malformed header', () => {
    const request = (headers: Record<string, string>, multiValueHeaders: Record<string, string[]> = {}) => ({
      path: '/me',
      headers,
      multiValueHeaders,
    });
    expect(
      presentedCredential(request({ Authorization: 'Bearer psa_x', Cookie: 'ps_session=pss_y' })),
    ).toEqual({
      secret: 'psa_x',
      via: 'bearer',
    });
    expect(presentedCredential(request({ cookie: 'other=1; ps_session=pss_y' }))).toEqual({
      secret: 'pss_y',
      via: 'cookie',
    });
    expect(presentedCredential(request({}, { Cookie: ['other=1', 'ps_session=pss_z'] }))).toEqual({
      secret: 'pss_z',
      via: 'cookie',
    });
    expect(
      presentedCredential(request({ authorization: 'Basic abc', cookie: 'ps_session=pss_y' })),
    ).toBeUndefined();
    expect(presentedCredential(request({ cookie: 'ps_session=' }))).toBeUndefined();
    expect(presentedCredential(request({}))).toBeUndefined();
  });
});
