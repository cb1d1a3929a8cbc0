/**
 * Signing in: with email and password, or by asking for a one-time link; and the page that link
 * opens, which signs in only when the person presses "Sign in" (mail scanners that fetch every
 * link must not use up the token).
 */
import { useEffect, useState } from 'preact/hooks';
import { api, client, sessionStarted } from '../api.ts';
import { href, navigate } from '../router.tsx';
import { ErrorNotice, useTitle } from '../ui.tsx';

export function SignInPage(props: { notice?: string | undefined; onSignedIn: () => Promise<void> }) {
  useTitle('Sign in');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const [linkSentTo, setLinkSentTo] = useState<string>();
  const [hint, setHint] = useState<string>();

  const signIn = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      sessionStarted(await api(client.POST('/auth/login', { body: { email, password } })));
      setPassword('');
      await props.onSignedIn();
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };

  const emailLink = async () => {
    setError(undefined);
    setHint(undefined);
    if (!email.includes('@')) {
      setHint('Enter your email address first; the link goes there.');
      return;
    }
    setBusy(true);
    try {
      await api(client.POST('/auth/magic-link', { body: { email } }));
      setLinkSentTo(email);
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };

  return (
    <main class="page narrow">
      <h1>Sign in to Pipeline Synthesis</h1>
      {props.notice ? (
        <p class="notice" role="status">
          {props.notice}
        </p>
      ) : null}
      <form class="card stack" method="post" onSubmit={signIn}>
        <label for="sign-in-email">Email</label>
        <input
          id="sign-in-email"
          type="email"
          autocomplete="username"
          required
          value={email}
          onInput={(event) => setEmail(event.currentTarget.value)}
        />
        <label for="sign-in-password">Password</label>
        <input
          id="sign-in-password"
          type="password"
          autocomplete="current-password"
          required
          value={password}
          onInput={(event) => setPassword(event.currentTarget.value)}
        />
        <ErrorNotice error={error} />
        <div class="actions">
          <button type="submit" class="primary" disabled={busy}>
            Sign in
          </button>
        </div>
        <hr />
        <p class="muted">No password, or forgotten it? We can email you a link that signs you in once.</p>
        <div class="actions">
          <button type="button" disabled={busy} onClick={emailLink}>
            Email me a sign-in link
          </button>
        </div>
        {hint ? <p role="alert">{hint}</p> : null}
        {linkSentTo ? (
          <p class="notice" role="status">
            If an account exists for {linkSentTo}, a sign-in link is on its way. It works once, for 15
            minutes.
          </p>
        ) : null}
      </form>
    </main>
  );
}

export function MagicLinkPage(props: { onSignedIn: () => Promise<void> }) {
  useTitle('Sign in');
  // Read once, then removed from the address bar: it stays out of history and bookmarks.
  const [token] = useState(() => new URLSearchParams(window.location.search).get('token'));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    if (window.location.search) history.replaceState(null, '', href('auth/magic-link'));
  }, []);

  const verify = async () => {
    setBusy(true);
    setError(undefined);
    try {
      sessionStarted(await api(client.POST('/auth/magic-link/verify', { body: { token: token ?? '' } })));
      await props.onSignedIn();
      navigate('', { replace: true });
    } catch (caught) {
      setError(caught);
      setBusy(false);
    }
  };

  return (
    <main class="page narrow">
      <h1>Sign in to Pipeline Synthesis</h1>
      {token ? (
        <div class="card stack">
          <p>Press the button to finish signing in. The link works once.</p>
          <ErrorNotice error={error}>
            <p>
              Links expire after 15 minutes and work once. <a href={href('')}>Ask for a new one</a>.
            </p>
          </ErrorNotice>
          <div class="actions">
            <button type="button" class="primary" disabled={busy} onClick={verify}>
              Sign in
            </button>
          </div>
        </div>
      ) : (
        <p class="notice" role="alert">
          This address has no sign-in token. <a href={href('')}>Sign in</a> or ask for a new link.
        </p>
      )}
    </main>
  );
}
