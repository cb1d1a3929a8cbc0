/*
 * Lambda handler of GET /auth/magic-link: the page a sign-in link opens, which posts the
 * token to /auth/magic-link/verify only when the user clicks.
 */
import { createHash } from 'node:crypto';
import { httpHandler } from '../platform/http.ts';

/*
 * The page a magic link opens. It does not use the token itself: mail scanners fetch (and some
 * render) every link in an email, so consuming the one-time token on GET would burn it before the
 * user clicks. The page waits for a click and then posts the token, from its own address bar,
 * to POST /auth/magic-link/verify, which sets the session cookies. The token is never echoed into
 * the HTML, the script is pinned by its hash in the CSP, and no referrer leaves the page.
 */
const SCRIPT = `
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

const PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Sign in</title></head>
<body>
<main>
<h1>Sign in to Pipeline Synthesis</h1>
<p id="status">Press the button to finish signing in.</p>
<button id="sign-in" type="button">Sign in</button>
</main>
<script>${SCRIPT}</script>
</body>
</html>
`;

const SCRIPT_HASH = createHash('sha256').update(SCRIPT, 'utf8').digest('base64');
const HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'content-security-policy': `default-src 'none'; script-src 'sha256-${SCRIPT_HASH}'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
};

/** GET /auth/magic-link?token=…: the page a sign-in email links to; it posts the token on a click. */
export const handler = httpHandler(async () => ({ statusCode: 200, headers: HEADERS, body: PAGE }));
