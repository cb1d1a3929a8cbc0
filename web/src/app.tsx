/**
 * The application's frame: who is signed in (GET /me), the session's life (sign in, refresh,
 * sign out, another tab signing out), the header with team switch, and the page for the address.
 */

import { useEffect, useState } from 'preact/hooks';
import { ApiError, api, client, knowsSessionExpiry, onSignedOut, refreshSession, signOut } from './api.ts';
import { EditByHandPage } from './pages/edit-by-hand.tsx';
import { EventsPage } from './pages/events.tsx';
import { ExecutionPage } from './pages/executions.tsx';
import { MembersPage } from './pages/members.tsx';
import { PipelinePage } from './pages/pipeline.tsx';
import { PipelinesPage } from './pages/pipelines.tsx';
import { RunPage } from './pages/run.tsx';
import { MagicLinkPage, SignInPage } from './pages/sign-in.tsx';
import { TeamSettingsPage } from './pages/team-settings.tsx';
import { TokensPage } from './pages/tokens.tsx';
import { Link, navigate, Routes, route, useLocation } from './router.tsx';
import { type Session, SessionContext, sessionOf } from './session.ts';
import type { Me } from './types.ts';
import { ErrorNotice, Loading, useTitle } from './ui.tsx';

/** The pages of a signed-in person, by address under the application. */
const ROUTES = [
  route({ pattern: '/', page: PipelinesPage }),
  route({ pattern: '/pipelines/:pipelineId', page: PipelinePage }),
  route({ pattern: '/pipelines/:pipelineId/executions/:executionId', page: ExecutionPage }),
  route({ pattern: '/runs/:runId', page: RunPage }),
  route({ pattern: '/settings/tokens', page: TokensPage }),
  route({ pattern: '/settings/team', page: TeamSettingsPage }),
  route({ pattern: '/settings/events', page: EventsPage }),
  route({ pattern: '/settings/members', page: MembersPage }),
  route({ pattern: '/pipelines/:pipelineId/change', page: EditByHandPage }),
];

type State =
  | { status: 'loading' }
  | { status: 'failed'; error: unknown }
  | { status: 'signed-out'; notice?: string }
  | { status: 'signed-in'; me: Me };

export function App() {
  const location = useLocation();
  const [state, setState] = useState<State>({ status: 'loading' });

  const loadMe = async () => {
    try {
      const me = await api(client.GET('/me'));
      // A session from before this page loaded: refresh once to learn when it expires.
      if (!knowsSessionExpiry()) await refreshSession();
      setState({ status: 'signed-in', me });
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) setState({ status: 'signed-out' });
      else setState({ status: 'failed', error });
    }
  };

  useEffect(() => {
    void loadMe();
    return onSignedOut(() =>
      setState((previous) =>
        previous.status === 'signed-in'
          ? { status: 'signed-out', notice: 'Your session has ended. Sign in again to continue.' }
          : previous.status === 'loading'
            ? previous
            : { status: 'signed-out' },
      ),
    );
  }, []);

  if (location.path === 'auth/magic-link') return <MagicLinkPage onSignedIn={loadMe} />;
  if (state.status === 'loading') return <Loading what="the application" />;
  if (state.status === 'failed') {
    return (
      <main class="page narrow">
        <h1>Pipeline Synthesis</h1>
        <ErrorNotice error={state.error}>
          <button type="button" onClick={() => void loadMe()}>
            Try again
          </button>
        </ErrorNotice>
      </main>
    );
  }
  if (state.status === 'signed-out') return <SignInPage notice={state.notice} onSignedIn={loadMe} />;

  const session = sessionOf(state.me);
  const endSession = async () => {
    await signOut().catch(() => undefined);
    setState({ status: 'signed-out', notice: 'You have signed out.' });
    navigate('', { replace: true });
  };
  const switchTeam = async (teamId: string) => {
    await refreshSession({ teamId });
    await loadMe();
    navigate('');
  };
  return (
    <SessionContext.Provider value={session}>
      <Header session={session} onSignOut={endSession} onSwitchTeam={switchTeam} />
      <main class="page" key={session.teamId}>
        <Routes routes={ROUTES} path={location.path} fallback={NotFound} />
      </main>
    </SessionContext.Provider>
  );
}

function Header(props: {
  session: Session;
  onSignOut: () => void;
  onSwitchTeam: (teamId: string) => Promise<void>;
}) {
  const { me, role, teamId, teamName } = props.session;
  const [error, setError] = useState<unknown>();
  return (
    <header class="topbar">
      <div class="topbar-row">
        <Link to="" class="brand">
          Pipeline Synthesis
        </Link>
        <nav aria-label="Main">
          <Link to="">Pipelines</Link>
          <Link to="settings/tokens">API tokens</Link>
          <Link to="settings/members">Members</Link>
          <Link to="settings/team">Team settings</Link>
          <Link to="settings/events">Webhooks and audit</Link>
        </nav>
      </div>
      <div class="topbar-row account">
        <p class="whoami">
          Signed in as <strong>{me.user.email}</strong> · {role} of{' '}
          {me.teams.length > 1 ? null : <strong>{teamName}</strong>}
        </p>
        {me.teams.length > 1 ? (
          <label class="team-switch">
            <span class="visually-hidden">Team</span>
            <select
              value={teamId}
              onChange={(event) => {
                setError(undefined);
                props.onSwitchTeam(event.currentTarget.value).catch(setError);
              }}
            >
              {me.teams.map((team) => (
                <option key={team.id} value={team.id}>
                  {team.name} ({team.role})
                </option>
              ))}
            </select>
          </label>
        ) : null}
        <button type="button" onClick={props.onSignOut}>
          Sign out
        </button>
      </div>
      <ErrorNotice error={error} />
    </header>
  );
}

function NotFound() {
  useTitle('Not found');
  return (
    <>
      <h1>Page not found</h1>
      <p>
        This address is not a page of the application. <Link to="">Go to the pipelines</Link>.
      </p>
    </>
  );
}
