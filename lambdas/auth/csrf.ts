/**
 * CSRF protection for requests a browser authenticates with the session cookie. SameSite=Strict
 * already keeps the cookie off cross-site requests; on top of that, and for same-site but
 * cross-origin pages (a sibling subdomain) that SameSite does not cover:
 * - a state-changing request must carry `X-Requested-With` (any value). A page of another origin
 *   cannot add a custom header without a CORS preflight, and this API grants none;
 * - when the browser sends Fetch Metadata, `Sec-Fetch-Site` must be `same-origin` (or `none`, a
 *   request the user made directly).
 * A request authenticated with `Authorization: Bearer` needs neither: a foreign page cannot make
 * the browser attach that header.
 */
export const CSRF_HEADER = 'X-Requested-With';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const ALLOWED_FETCH_SITES = new Set(['same-origin', 'none']);

/** Why a cookie-authenticated request is refused, or null when it may proceed. */
export function csrfRefusal(method: string, header: (name: string) => string | undefined): string | null {
  if (SAFE_METHODS.has(method.toUpperCase())) return null;
  const site = header('sec-fetch-site')?.trim().toLowerCase();
  if (site !== undefined && site !== '' && !ALLOWED_FETCH_SITES.has(site)) {
    return `A ${site} request cannot use the session cookie.`;
  }
  if (!header(CSRF_HEADER)?.trim()) {
    return `A request that changes state with the session cookie needs the ${CSRF_HEADER} header (or use Authorization: Bearer).`;
  }
  return null;
}
