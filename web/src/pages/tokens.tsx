/**
 * Settings → API tokens: the user's tokens (name, hint, created, last used), creating one (its
 * secret shown once, with a copy button and a warning) and revoking one after confirmation.
 */
import { useRef, useState } from 'preact/hooks';
import { api, client } from '../api.ts';
import { useSession } from '../session.ts';
import type { ApiToken, CreatedApiToken, Me } from '../types.ts';
import { ConfirmDialog, ErrorNotice, Time, useTitle } from '../ui.tsx';
import { PagedItems, useConfirmedRemoval, usePagedList } from './pipelines.tsx';

const teamNameOf = (me: Me, teamId: string) =>
  me.teams.find((candidate) => candidate.id === teamId)?.name ?? teamId;

export function TokensPage() {
  useTitle('API tokens');
  const list = usePagedList((query) => api(client.GET('/api-tokens', { params: { query } })), 'api-tokens');
  const [error, setError] = useState<unknown>();
  const revoking = useConfirmedRemoval(
    list,
    (token: ApiToken) => api(client.DELETE('/api-tokens/{id}', { params: { path: { id: token.id } } })),
    setError,
  );
  const asked = revoking.asking;

  return (
    <>
      <h1>API tokens</h1>
      <p class="muted">
        Tokens let scripts and the CLI call the API as you, in one team, with your role there. They work until
        you revoke them.
      </p>
      <CreateToken onCreated={list.reload} onError={setError} />
      <ErrorNotice error={error ?? list.error} />
      <section aria-labelledby="your-tokens">
        <h2 id="your-tokens">Your tokens</h2>
        <PagedItems list={list} empty="You have no API tokens." what="tokens">
          {(items) => <TokenTable tokens={items} onRevoke={revoking.ask} />}
        </PagedItems>
      </section>
      {asked ? (
        <RevokeDialog
          token={asked}
          onConfirm={() => void revoking.confirm(asked)}
          onCancel={revoking.cancel}
        />
      ) : null}
    </>
  );
}

/** The form that creates a token, and the new token's secret once it is made. */
function CreateToken(props: { onCreated: () => void; onError: (error: unknown) => void }) {
  const { me, teamId } = useSession();
  const [name, setName] = useState('');
  const [team, setTeam] = useState(teamId);
  const [busy, setBusy] = useState(false);
  const [created, setCreated] = useState<CreatedApiToken>();

  const create = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    props.onError(undefined);
    try {
      setCreated(await api(client.POST('/api-tokens', { body: { name: name.trim(), teamId: team } })));
      setName('');
      props.onCreated();
    } catch (caught) {
      props.onError(caught);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="create-token" class="card">
      <h2 id="create-token">Create a token</h2>
      <form class="inline-form" method="post" onSubmit={create}>
        <label for="token-name">Token name</label>
        <input
          id="token-name"
          required
          maxLength={100}
          placeholder="e.g. nightly evaluation job"
          value={name}
          onInput={(event) => setName(event.currentTarget.value)}
        />
        {me.teams.length > 1 ? <TeamSelect teams={me.teams} value={team} onChange={setTeam} /> : null}
        <button type="submit" class="primary" disabled={busy || name.trim() === ''}>
          Create token
        </button>
      </form>
      {created ? (
        <NewToken
          created={created}
          teamName={teamNameOf(me, created.teamId)}
          onDone={() => setCreated(undefined)}
        />
      ) : null}
    </section>
  );
}

function TeamSelect(props: { teams: Me['teams']; value: string; onChange: (teamId: string) => void }) {
  return (
    <>
      <label for="token-team">Team</label>
      <select
        id="token-team"
        value={props.value}
        onChange={(event) => props.onChange(event.currentTarget.value)}
      >
        {props.teams.map((candidate) => (
          <option key={candidate.id} value={candidate.id}>
            {candidate.name}
          </option>
        ))}
      </select>
    </>
  );
}

function TokenTable(props: { tokens: ApiToken[]; onRevoke: (token: ApiToken) => void }) {
  return (
    <div class="table-scroll">
      <table class="list cards-on-phone">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Team</th>
            <th scope="col">Token</th>
            <th scope="col">Created</th>
            <th scope="col">Last used</th>
            <th scope="col">Status</th>
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {props.tokens.map((token) => (
            <TokenRow key={token.id} token={token} onRevoke={props.onRevoke} />
          ))}
        </tbody>
      </table>
    </div>
  );
}

function TokenRow({ token, onRevoke }: { token: ApiToken; onRevoke: (token: ApiToken) => void }) {
  const { me } = useSession();
  return (
    <tr>
      <td data-label="Name">{token.name}</td>
      <td data-label="Team">{teamNameOf(me, token.teamId)}</td>
      <td data-label="Token">
        <code>{token.hint}</code>
      </td>
      <td data-label="Created">
        <Time iso={token.createdAt} />
      </td>
      <td data-label="Last used">
        {token.lastUsedAt ? <Time iso={token.lastUsedAt} /> : <span class="muted">never</span>}
      </td>
      <td data-label="Status">{tokenStatus(token)}</td>
      <td>
        {token.revokedAt ? null : (
          <button type="button" class="danger" onClick={() => onRevoke(token)}>
            Revoke
          </button>
        )}
      </td>
    </tr>
  );
}

function RevokeDialog(props: { token: ApiToken; onConfirm: () => void; onCancel: () => void }) {
  return (
    <ConfirmDialog
      title={`Revoke “${props.token.name}”?`}
      confirmLabel="Revoke"
      danger
      onConfirm={props.onConfirm}
      onCancel={props.onCancel}
    >
      <p>
        Scripts using <code>{props.token.hint}</code> are refused within 30 seconds. This cannot be undone;
        create a new token if you need one again.
      </p>
    </ConfirmDialog>
  );
}

function tokenStatus(token: ApiToken): string {
  if (token.revokedAt) return 'revoked';
  if (token.expiresAt && Date.parse(token.expiresAt) <= Date.now()) return 'expired';
  return token.expiresAt ? `active until ${new Date(token.expiresAt).toLocaleDateString()}` : 'active';
}

function NewToken(props: { created: CreatedApiToken; teamName: string; onDone: () => void }) {
  const field = useRef<HTMLInputElement>(null);
  const [copied, setCopied] = useState<string>();
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.created.token);
      setCopied('Copied to the clipboard.');
    } catch {
      field.current?.select();
      setCopied('Selected: press Ctrl+C (⌘C) to copy.');
    }
  };
  return (
    <section class="notice notice-warning new-token" aria-label="New API token">
      <p>
        <strong>Copy this token now: it is shown only this once.</strong> Anyone who holds it can act as you
        in {props.teamName}. Keep it in a secret store, never in code or chat.
      </p>
      <label for="new-token-secret">Token “{props.created.name}”</label>
      <div class="copy-row">
        <input
          id="new-token-secret"
          ref={field}
          readOnly
          value={props.created.token}
          onFocus={(event) => event.currentTarget.select()}
        />
        <button type="button" onClick={() => void copy()}>
          Copy
        </button>
      </div>
      {copied ? <p role="status">{copied}</p> : null}
      <div class="actions">
        <button type="button" onClick={props.onDone}>
          I have copied it
        </button>
      </div>
    </section>
  );
}
