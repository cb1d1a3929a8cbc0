import { describe, expect, it } from 'vitest';
import { csrfRefusal } from '../../../lambdas/auth/csrf.ts';

const HOST = 'api.example.test';
const check = (method: string, headers: Record<string, string>) =>
  csrfRefusal(method, (name) => ({ host: HOST, ...headers })[name.toLowerCase()]);

describe('csrfRefusal (cookie-authenticated requests)', () => {
  it.each([
    ['GET from anywhere', 'GET', { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' }],
    ['JSON body from curl (the API document’s login)', 'POST', { 'content-type': 'application/json' }],
    ['JSON body with a charset', 'POST', { 'content-type': 'Application/JSON; charset=utf-8' }],
    [
      'JSON body from the same origin',
      'POST',
      { 'content-type': 'application/json', origin: `https://${HOST}` },
    ],
    ['bodiless, same-origin Origin', 'POST', { origin: `https://${HOST}` }],
    ['bodiless, Sec-Fetch-Site same-origin', 'DELETE', { 'sec-fetch-site': 'same-origin' }],
    ['bodiless, X-Requested-With', 'POST', { 'x-requested-with': 'fetch' }],
    [
      'typed in the address bar (none)',
      'POST',
      { 'sec-fetch-site': 'none', 'content-type': 'application/json' },
    ],
  ])('lets through %s', (_, method, headers) => {
    expect(check(method, headers)).toBeNull();
  });

  it.each([
    ['another origin', 'POST', { 'content-type': 'application/json', origin: 'https://evil.example' }],
    ['a sibling subdomain', 'POST', { 'content-type': 'application/json', origin: `https://app.${HOST}` }],
    ['an opaque origin', 'POST', { 'content-type': 'application/json', origin: 'null' }],
    [
      'Sec-Fetch-Site cross-site',
      'POST',
      { 'content-type': 'application/json', 'sec-fetch-site': 'cross-site' },
    ],
    ['Sec-Fetch-Site same-site', 'POST', { 'x-requested-with': 'x', 'sec-fetch-site': 'same-site' }],
    ['a form post', 'POST', { 'content-type': 'application/x-www-form-urlencoded' }],
    ['a text/plain post', 'POST', { 'content-type': 'text/plain' }],
    ['a multipart post', 'POST', { 'content-type': 'multipart/form-data; boundary=b' }],
    ['bodiless without evidence', 'POST', {}],
    [
      'bodiless with a foreign Origin and X-Requested-With',
      'POST',
      { origin: 'https://evil.example', 'x-requested-with': 'x' },
    ],
  ])('refuses %s', (_, method, headers) => {
    expect(check(method, headers)).toEqual(expect.any(String));
  });
});
