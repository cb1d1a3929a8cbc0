/*
 * GET /auth/magic-link?token=…: the page a sign-in email links to; it posts the token on a click.
 */
import { createHash } from 'node:crypto';
import * as z from 'zod/mini';
import { operationHandler } from '../http/operation.ts';
import { STRICT_TRANSPORT_SECURITY } from '../http/response.ts';
import { defineOperation } from './declaration.ts';

export const showMagicLinkPage = defineOperation({
  name: 'show-magic-link-page',
  method: 'GET',
  path: '/auth/magic-link',
  summary: 'The page a sign-in link opens (HTML).',
  access: {},
  public:
    'The page a sign-in email links to, opened by a browser that holds no credential yet. It is static HTML with a hash-pinned script; it reads no data and does not consume the token, which it posts to POST /auth/magic-link/verify on a click.',
  query: {
    // Read by the page's script from its address bar, never by the server.
    token: { schema: z.optional(z.string()), description: 'The one-time token of the link.' },
  },
  response: { status: 200, contentType: 'text/html' },
  errors: [],
});

/*
 * The page a magic link opens. It does not use the token itself: mail scanners fetch (and some
 * render) every link in an email, so consuming the one-time token on GET would burn it before the
 * user clicks. The page waits for a click and then posts the token, from its own address bar,
 * to POST /auth/magic-link/verify, which sets the session cookies. The token is never echoed into
 * the HTML, the script is pinned by its hash in the CSP, and no referrer leaves the page.
 */
/** The page's one script: it posts the token from the address bar on a click. */
const script = () => `
const token = new URLSearchParams(location.search).get('token');
history.replaceState(null, '', location.pathname);
const status = document.getElementById('status');
const button = document.getElementById('sign-in');
if (!token) { status.textContent = 'This link has no sign-in token.'; button.disabled = true; }
button.addEventListener('click', async () => {
  button.disabled = true;
  status.textContent = 'Signing in…';
  try {
    const response = await fetch('magic-link/verify', {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json', 'x-requested-with': 'magic-link-page' },
      body: JSON.stringify({ token }),
    });
    const body = await response.json().catch(() => ({}));
    status.textContent = response.ok ? 'You are signed in; you can close this page.' : (body.message || 'The link could not be used.');
  } catch {
    status.textContent = 'The sign-in request failed; check your connection and try again.';
    button.disabled = false;
  }
});
`;

/** The page, which never holds the token itself. */
const page = (inlineScript: string) => `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Sign in</title></head>
<body>
<main>
<h1>Sign in to Pipeline Synthesis</h1>
<p id="status">Press the button to finish signing in.</p>
<button id="sign-in" type="button">Sign in</button>
</main>
<script>${inlineScript}</script>
</body>
</html>
`;

/** The page's headers: its one script is pinned by its hash. */
function pageHeaders(inlineScript: string): Record<string, string> {
  const scriptHash = createHash('sha256').update(inlineScript, 'utf8').digest('base64');
  return {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    ...STRICT_TRANSPORT_SECURITY,
    'content-security-policy': `default-src 'none'; script-src 'sha256-${scriptHash}'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
  };
}

export const handler = /* @__PURE__ */ operationHandler(showMagicLinkPage, () => {
  const inlineScript = script();
  const answer = { statusCode: 200, headers: pageHeaders(inlineScript), body: page(inlineScript) };
  return async () => ({ raw: answer });
});
