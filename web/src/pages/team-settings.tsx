/**
 * Settings → Team: how long the team's signals and executions are kept (its retention windows).
 * Everyone of the team reads them; admins change them, and lowering one (which deletes data) asks first.
 */
import { useState } from 'preact/hooks';
import { api, client } from '../api.ts';
import { useSession } from '../session.ts';
import { ConfirmDialog, ErrorNotice, Loading, Time, useLoad, useTitle } from '../ui.tsx';

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
  const [asking, setAsking] = useState<string[]>();
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
  const next = {
    signalRetentionDays: Number(signals ?? settings.signalRetentionDays),
    executionRetentionDays: Number(executions ?? settings.executionRetentionDays),
  };
  const lowered = loweredWindows(settings, next);
  const submit = (event: Event) => {
    event.preventDefault();
    if (lowered.length > 0) setAsking(lowered);
    else void save();
  };
  const save = async () => {
    setBusy(true);
    setError(undefined);
    setSaved(false);
    try {
      await api(
        client.PATCH('/teams/{teamId}/settings', {
          params: { path },
          body: next,
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
        <form class="inline-form" method="post" onSubmit={submit}>
          <RetentionInputs
            disabled={!isAdmin}
            signals={signals ?? String(settings.signalRetentionDays)}
            executions={executions ?? String(settings.executionRetentionDays)}
            onSignals={setSignals}
            onExecutions={setExecutions}
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
      {asking ? (
        <LowerRetentionDialog
          lines={asking}
          onConfirm={() => {
            setAsking(undefined);
            void save();
          }}
          onCancel={() => setAsking(undefined)}
        />
      ) : null}
    </>
  );
}

/** Lowering a window deletes what falls outside it: what each lowered window deletes, in words. */
function loweredWindows(
  now: { signalRetentionDays: number; executionRetentionDays: number },
  next: { signalRetentionDays: number; executionRetentionDays: number },
): string[] {
  return [
    next.signalRetentionDays < now.signalRetentionDays
      ? `Signals older than ${next.signalRetentionDays} days (now ${now.signalRetentionDays}) are no longer read and are deleted within a day.`
      : null,
    next.executionRetentionDays < now.executionRetentionDays
      ? `Executions older than ${next.executionRetentionDays} days (now ${now.executionRetentionDays}) are no longer read and are deleted within a day.`
      : null,
  ].filter((line) => line !== null);
}

function LowerRetentionDialog(props: { lines: string[]; onConfirm: () => void; onCancel: () => void }) {
  return (
    <ConfirmDialog
      title="Lower the retention and delete older records?"
      confirmLabel="Lower retention"
      danger
      onConfirm={props.onConfirm}
      onCancel={props.onCancel}
    >
      {props.lines.map((line) => (
        <p key={line}>{line}</p>
      ))}
      <p>This cannot be undone: deleted records do not come back if the window is raised again.</p>
    </ConfirmDialog>
  );
}

/** The two windows, in whole days from 1 to 3650. */
function RetentionInputs(props: {
  disabled: boolean;
  signals: string;
  executions: string;
  onSignals: (value: string) => void;
  onExecutions: (value: string) => void;
}) {
  return (
    <>
      <label for="signal-retention">Signals kept (days)</label>
      <input
        id="signal-retention"
        type="number"
        min={1}
        max={3650}
        step={1}
        required
        disabled={props.disabled}
        value={props.signals}
        onInput={(event) => props.onSignals(event.currentTarget.value)}
      />
      <label for="execution-retention">Executions kept (days)</label>
      <input
        id="execution-retention"
        type="number"
        min={1}
        max={3650}
        step={1}
        required
        disabled={props.disabled}
        value={props.executions}
        onInput={(event) => props.onExecutions(event.currentTarget.value)}
      />
    </>
  );
}
