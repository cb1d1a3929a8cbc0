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

/** Why a cookie-authenticated request is refused, or null when it may proceed. */
export function csrfRefusal(method: string, header: (name: string) => string | undefined): string | null {
  if (SAFE_METHODS.has(method.toUpperCase())) return null;
  // A blank header counts as an absent one.
  const site = header('sec-fetch-site')?.trim().toLowerCase() || undefined;
  if (site !== undefined && !ALLOWED_FETCH_SITES.has(site)) {
    return `A ${site} request cannot use the session cookie.`;
  }
  const origin = header('origin')?.trim() || undefined;
  // Stryker disable next-line ConditionalExpression: without an Origin, isOwnOrigin(undefined) is false too (URL.canParse refuses it).
  const sameOrigin = origin !== undefined && isOwnOrigin(origin, header('host'));
  if (origin !== undefined && !sameOrigin) {
    return 'A request from another origin cannot use the session cookie.';
  }
  const contentType = header('content-type')?.trim() || undefined;
  if (contentType !== undefined) {
    if (mediaType(contentType) !== 'application/json') {
      return 'A request that changes state with the session cookie must send its body as application/json.';
    }
    return null;
  }
  if (sameOrigin || site === 'same-origin' || header(CSRF_HEADER)?.trim()) return null;
  return `A request without a body that changes state with the session cookie needs a same-origin Origin or the ${CSRF_HEADER} header (or use Authorization: Bearer).`;
}
