import { describe, expect, it } from 'vitest';
import { CSRF_REFUSALS, csrfRefusal } from '../../../lambdas/auth/csrf.ts';

// Each rule of the CSRF check at its edge, with the exact answer a refused browser request gets.
const HOST = 'api.example.test';
const FOREIGN = CSRF_REFUSALS.foreignOrigin();
const NO_EVIDENCE = CSRF_REFUSALS.noSameOriginSign();

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
      CSRF_REFUSALS.crossSite(site.trim().toLowerCase()),
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
    ['application/x-www-form-urlencoded', 'application/x-www-form-urlencoded'],
    ['text/plain;charset=UTF-8', 'text/plain'],
    ['application/json-patch+json', 'application/json-patch+json'],
    ['text/plain; application/json', 'text/plain'],
  ])('refuses a body of %j, even from the same origin', (contentType, named) => {
    expect(check('PATCH', withHost({ 'content-type': contentType, origin: `https://${HOST}` }))).toBe(
      CSRF_REFUSALS.notJson(named),
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

describe('what a refusal says', () => {
  // The gateway's 403 shows the refusal as its message (lib/gateway-errors.ts), put into JSON as is.
  const refusals = {
    'a cross-site Sec-Fetch-Site': check('POST', withHost({ 'sec-fetch-site': 'cross-site' })),
    'a foreign Origin': check('POST', withHost({ origin: 'https://evil.example' })),
    'a form body': check('POST', withHost({ 'content-type': 'text/plain' })),
    'a bodiless request': check('POST', withHost({})),
  };

  it.each(Object.entries(refusals))('names the CSRF rule for %s, not a permission', (_, refusal) => {
    expect(refusal).toMatch(/^Refused by the CSRF rule for the session cookie: /);
    expect(refusal).not.toMatch(/does not allow|permission/i);
  });

  it('says what a same-origin page or a script sends instead', () => {
    expect(refusals['a cross-site Sec-Fetch-Site']).toContain('sends Sec-Fetch-Site: same-origin');
    expect(refusals['a cross-site Sec-Fetch-Site']).toContain('Sec-Fetch-Site: cross-site');
    expect(refusals['a foreign Origin']).toContain('sends Origin equal to this API');
    expect(refusals['a form body']).toContain('its body is text/plain');
    expect(refusals['a form body']).toContain('Content-Type: application/json');
    expect(refusals['a bodiless request']).toMatch(/X-Requested-With.*Origin.*Sec-Fetch-Site: same-origin/);
    expect(refusals['a bodiless request']).toContain('Authorization: Bearer');
  });

  it('never quotes a header value that could break the JSON it is put into', () => {
    const hostile = 'x", "error": "OK\\';
    const site = check('POST', withHost({ 'sec-fetch-site': hostile }));
    const type = check('POST', withHost({ 'content-type': `${hostile}/json` }));

    expect(site).toContain('other than same-origin or none');
    expect(type).toContain('its body is not JSON');
    for (const text of [site, type]) expect(JSON.parse(`{"message":"${text}"}`).message).toBe(text);
  });
});
