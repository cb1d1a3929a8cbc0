/**
 * Settings → Team: how long the team's signals and executions are kept (its retention windows).
 * Everyone of the team reads them; admins change them.
 */
import { useState } from 'preact/hooks';
import { api, client } from '../api.ts';
import { useSession } from '../session.ts';
import { ErrorNotice, Loading, Time, useLoad, useTitle } from '../ui.tsx';

export function TeamSettingsPage() {
  useTitle('Team settings');
  const { teamId, teamName, role } = useSession();
  const path = { teamId };
  const loaded = useLoad(() => api(client.GET('/teams/{teamId}/settings', { params: { path } })), [teamId]);
  const [signals, setSignals] = useState<string>();
  const [executions, setExecutions] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const [saved, setSaved] = useState(false);
  if (!loaded.data) {
    return (
      <>
        <h1>Team settings</h1>
        {loaded.error ? <ErrorNotice error={loaded.error} /> : <Loading what="the team settings" />}
      </>
    );
  }
  const settings = loaded.data;
  const isAdmin = role === 'admin';
  const save = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    setSaved(false);
    try {
      await api(
        client.PATCH('/teams/{teamId}/settings', {
          params: { path },
          body: {
            signalRetentionDays: Number(signals ?? settings.signalRetentionDays),
            executionRetentionDays: Number(executions ?? settings.executionRetentionDays),
          },
        }),
      );
      setSaved(true);
      loaded.reload();
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <h1>Team settings</h1>
      <p class="muted">
        How long {teamName} keeps signals and executions. Older records are never read again (not by the API,
        not by synthesis, not by an export) and are removed from the database within a day.
      </p>
      <section aria-labelledby="retention" class="card">
        <h2 id="retention">Retention</h2>
        <form class="inline-form" method="post" onSubmit={save}>
          <label for="signal-retention">Signals kept (days)</label>
          <input
            id="signal-retention"
            type="number"
            min={1}
            max={3650}
            step={1}
            required
            disabled={!isAdmin}
            value={signals ?? String(settings.signalRetentionDays)}
            onInput={(event) => setSignals(event.currentTarget.value)}
          />
          <label for="execution-retention">Executions kept (days)</label>
          <input
            id="execution-retention"
            type="number"
            min={1}
            max={3650}
            step={1}
            required
            disabled={!isAdmin}
            value={executions ?? String(settings.executionRetentionDays)}
            onInput={(event) => setExecutions(event.currentTarget.value)}
          />
          {isAdmin ? (
            <button type="submit" class="primary" disabled={busy}>
              Save retention
            </button>
          ) : null}
        </form>
        {isAdmin ? null : <p class="muted small">Only a team admin can change these.</p>}
        {saved ? <p role="status">Saved.</p> : null}
        <p class="muted small">
          Last changed <Time iso={settings.updatedAt} />
        </p>
      </section>
      <ErrorNotice error={error} />
    </>
  );
}
