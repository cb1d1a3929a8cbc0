import { describe, expect, it } from 'vitest';
import { csrfRefusal } from '../../../lambdas/auth/csrf.ts';

// Each rule of the CSRF check at its edge, with the exact answer a refused browser request gets.
const HOST = 'api.example.test';
const FOREIGN = 'A request from another origin cannot use the session cookie.';
const NOT_JSON =
  'A request that changes state with the session cookie must send its body as application/json.';
const NO_EVIDENCE =
  'A request without a body that changes state with the session cookie needs a same-origin Origin or the X-Requested-With header (or use Authorization: Bearer).';

const check = (method: string, headers: Record<string, string>) =>
  csrfRefusal(method, (name) => headers[name.toLowerCase()]);
const withHost = (headers: Record<string, string>) => ({ host: HOST, ...headers });

describe('the Origin rule', () => {
  it.each([
    ['https', `https://${HOST}`],
    ['http (TLS ends at API Gateway)', `http://${HOST}`],
    ['with padding around it', `  https://${HOST} `],
  ])('takes this API’s own origin (%s) as evidence for a bodiless request', (_, origin) => {
    expect(check('POST', withHost({ origin }))).toBeNull();
  });

  it('compares with the Host header case-insensitively and without its padding', () => {
    expect(check('POST', { host: ' API.Example.TEST ', origin: `https://${HOST}` })).toBeNull();
  });

  it.each([
    ['another scheme on the same host', `ftp://${HOST}`],
    ['another port', `https://${HOST}:8443`],
    ['an unparseable origin', 'not an origin'],
    ['the opaque origin', 'null'],
  ])('refuses %s', (_, origin) => {
    expect(check('POST', withHost({ origin, 'content-type': 'application/json' }))).toBe(FOREIGN);
  });

  it('cannot match anything when the request has no Host header', () => {
    expect(check('POST', { origin: `https://${HOST}`, 'content-type': 'application/json' })).toBe(FOREIGN);
  });

  it('treats a blank Origin as no Origin: no refusal, but no evidence either', () => {
    expect(check('POST', withHost({ origin: '  ', 'content-type': 'application/json' }))).toBeNull();
    expect(check('POST', withHost({ origin: '' }))).toBe(NO_EVIDENCE);
  });
});

describe('the Sec-Fetch-Site rule', () => {
  it.each(['cross-site', 'same-site', 'Same-Site '])('refuses %s, naming it', (site) => {
    expect(check('POST', withHost({ 'sec-fetch-site': site, 'content-type': 'application/json' }))).toBe(
      `A ${site.trim().toLowerCase()} request cannot use the session cookie.`,
    );
  });

  it('takes a blank header as an absent one', () => {
    expect(check('POST', withHost({ 'sec-fetch-site': ' ', 'content-type': 'application/json' }))).toBeNull();
  });

  it('takes same-origin, in any case, as evidence for a bodiless request; none is no evidence', () => {
    expect(check('POST', withHost({ 'sec-fetch-site': 'Same-Origin' }))).toBeNull();
    expect(check('POST', withHost({ 'sec-fetch-site': 'none' }))).toBe(NO_EVIDENCE);
  });
});

describe('the content-type rule', () => {
  it.each(['application/json', ' application/json ; charset=utf-8', 'APPLICATION/JSON'])(
    'lets a body of %j through without other evidence',
    (contentType) => {
      expect(check('PUT', withHost({ 'content-type': contentType }))).toBeNull();
    },
  );

  it.each([
    'application/x-www-form-urlencoded',
    'text/plain;charset=UTF-8',
    'application/json-patch+json',
    'text/plain; application/json',
  ])('refuses a body of %j, even from the same origin', (contentType) => {
    expect(check('PATCH', withHost({ 'content-type': contentType, origin: `https://${HOST}` }))).toBe(
      NOT_JSON,
    );
  });

  it('takes a blank Content-Type as a bodiless request', () => {
    expect(check('POST', withHost({ 'content-type': ' ' }))).toBe(NO_EVIDENCE);
    expect(check('POST', withHost({ 'content-type': ' ', 'x-requested-with': 'fetch' }))).toBeNull();
  });
});

describe('bodiless requests', () => {
  it('need X-Requested-With with a value', () => {
    expect(check('DELETE', withHost({ 'x-requested-with': 'XMLHttpRequest' }))).toBeNull();
    expect(check('DELETE', withHost({ 'x-requested-with': '  ' }))).toBe(NO_EVIDENCE);
    expect(check('DELETE', withHost({}))).toBe(NO_EVIDENCE);
  });
});

describe('safe methods', () => {
  it.each(['GET', 'head', 'OPTIONS'])('%s passes whatever the headers say', (method) => {
    expect(check(method, { 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' })).toBeNull();
  });

  it('does not include POST, PUT, PATCH or DELETE', () => {
    for (const method of ['POST', 'put', 'PATCH', 'DELETE']) expect(check(method, {})).toBe(NO_EVIDENCE);
  });
});
