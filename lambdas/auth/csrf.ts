/**
 * CSRF protection for requests a browser authenticates with the session cookie. SameSite=Strict
 * already keeps the cookie off cross-site requests; on top of that, and for same-site but
 * cross-origin pages (a sibling subdomain) that SameSite does not cover, a state-changing request:
 * - is refused when the browser says it comes from another origin: `Sec-Fetch-Site` other than
 *   `same-origin` or `none`, or an `Origin` that is not this API's own (`null` included);
 * - with a body, needs `Content-Type: application/json`: a page of another origin cannot send that
 *   without a CORS preflight, and this API grants none (a form can only send urlencoded,
 *   multipart or text/plain);
 * - without a body (refresh, logout, approve), needs positive evidence that it is same-origin: an
 *   `Origin` equal to this API's, `Sec-Fetch-Site: same-origin`, or an `X-Requested-With` header
 *   (which no other origin can add without a preflight).
 * So the API document's own login request with `Content-Type: application/json` works from
 * curl and scripts without any extra header. A request authenticated with `Authorization: Bearer`
 * needs none of this: a foreign page cannot make the browser attach that header.
 */
const CSRF_HEADER = 'X-Requested-With';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const ALLOWED_FETCH_SITES = new Set(['same-origin', 'none']);

/**
 * The authorizer context key of a Deny's reason, which the gateway's 403 body shows
 * (lib/gateway-errors.ts): what turns the CSRF refusal into the answer's message on AWS and locally.
 */
export const CSRF_REFUSAL_CONTEXT_KEY = 'refusal';

/**
 * The refusals, each naming its rule and what a page of this API's own origin sends. They quote a
 * header value only when it is a plain token (the gateway puts the text into JSON as is).
 */
const PREFIX = 'Refused by the CSRF rule for the session cookie:';
const OR_BEARER = 'A script can send Authorization: Bearer <token> instead of the cookie.';
const plainToken = (value: string) => /^[a-z0-9][a-z0-9.+/-]{0,60}$/.test(value);
export const CSRF_REFUSALS = {
  crossSite: (site: string) =>
    `${PREFIX} the browser says this request comes from another site (Sec-Fetch-Site: ${plainToken(site) ? site : 'other than same-origin or none'}). A page of this API's own origin sends Sec-Fetch-Site: same-origin. ${OR_BEARER}`,
  foreignOrigin: () =>
    `${PREFIX} its Origin is not this API's own origin (another site, a sibling subdomain or null). A page of this API's own origin sends Origin equal to this API's scheme and host. ${OR_BEARER}`,
  notJson: (type: string) =>
    `${PREFIX} its body is ${plainToken(type) ? type : 'not JSON'}, all a form of another site can send. Send the body as JSON with Content-Type: application/json.`,
  noSameOriginSign: () =>
    `${PREFIX} it changes state without a body and without a sign that it comes from this API's own pages. Send ${CSRF_HEADER} (any value), an Origin equal to this API's, or Sec-Fetch-Site: same-origin (browsers send both on same-origin requests). ${OR_BEARER}`,
} as const;

/** `Origin` equals the origin of the request's `Host` (either scheme: TLS ends at API Gateway). */
function isOwnOrigin(origin: string, host: string | undefined): boolean {
  if (!URL.canParse(origin)) return false;
  const url = new URL(origin);
  return (url.protocol === 'https:' || url.protocol === 'http:') && url.host === host?.trim().toLowerCase();
}

/** The media type of a Content-Type header, lower-case and without parameters. */
function mediaType(contentType: string): string {
  // Stryker disable next-line StringLiteral: split always yields a first element; `?? ''` only satisfies the type.
  return (contentType.split(';')[0] ?? '').trim().toLowerCase();
}

/** The rule a refused request broke, by name (what a log line says), and its message. */
export interface CsrfViolation {
  rule: keyof typeof CSRF_REFUSALS;
  message: string;
}

/** The rule a cookie-authenticated request breaks, or null when it may proceed. */
export function csrfViolation(
  method: string,
  header: (name: string) => string | undefined,
): CsrfViolation | null {
  if (SAFE_METHODS.has(method.toUpperCase())) return null;
  // A blank header counts as an absent one.
  const site = header('sec-fetch-site')?.trim().toLowerCase() || undefined;
  if (site !== undefined && !ALLOWED_FETCH_SITES.has(site))
    return { rule: 'crossSite', message: CSRF_REFUSALS.crossSite(site) };
  const origin = header('origin')?.trim() || undefined;
  // Stryker disable next-line ConditionalExpression: without an Origin, isOwnOrigin(undefined) is false too (URL.canParse refuses it).
  const sameOrigin = origin !== undefined && isOwnOrigin(origin, header('host'));
  if (origin !== undefined && !sameOrigin)
    return { rule: 'foreignOrigin', message: CSRF_REFUSALS.foreignOrigin() };
  const contentType = header('content-type')?.trim() || undefined;
  if (contentType !== undefined) {
    const type = mediaType(contentType);
    return type === 'application/json' ? null : { rule: 'notJson', message: CSRF_REFUSALS.notJson(type) };
  }
  if (sameOrigin || site === 'same-origin' || header(CSRF_HEADER)?.trim()) return null;
  return { rule: 'noSameOriginSign', message: CSRF_REFUSALS.noSameOriginSign() };
}

/** Why a cookie-authenticated request is refused, or null when it may proceed. */
export function csrfRefusal(method: string, header: (name: string) => string | undefined): string | null {
  return csrfViolation(method, header)?.message ?? null;
}
