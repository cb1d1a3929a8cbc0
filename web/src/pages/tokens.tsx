/**
 * Settings → API tokens: the user's tokens (name, hint, created, last used), creating one (its
 * secret shown once, with a copy button and a warning) and revoking one after confirmation.
 */
import { useRef, useState } from 'preact/hooks';
import { api, post, seg } from '../api.ts';
import { useSession } from '../app.tsx';
import type { ApiToken } from '../types.ts';
import { ConfirmDialog, ErrorNotice, Time, useTitle } from '../ui.tsx';
import { LoadMore, usePagedList } from './pipelines.tsx';

type CreatedToken = ApiToken & { token: string };

export function TokensPage() {
  useTitle('API tokens');
  const { me, teamId } = useSession();
  const list = usePagedList<ApiToken>('api-tokens');
  const [name, setName] = useState('');
  const [team, setTeam] = useState(teamId);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const [created, setCreated] = useState<CreatedToken>();
  const [revoking, setRevoking] = useState<ApiToken>();
  const teamName = (id: string) => me.teams.find((candidate) => candidate.id === id)?.name ?? id;

  const create = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      setCreated(await post<CreatedToken>('api-tokens', { name: name.trim(), teamId: team }));
      setName('');
      list.reload();
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };

  const revoke = async (token: ApiToken) => {
    setRevoking(undefined);
    setError(undefined);
    try {
      await api('DELETE', `api-tokens/${seg(token.id)}`);
      list.reload();
    } catch (caught) {
      setError(caught);
    }
  };

  return (
    <>
      <h1>API tokens</h1>
      <p class="muted">
        Tokens let scripts and the CLI call the API as you, in one team, with your role there. They work until
        you revoke them.
      </p>
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
          {me.teams.length > 1 ? (
            <>
              <label for="token-team">Team</label>
              <select id="token-team" value={team} onChange={(event) => setTeam(event.currentTarget.value)}>
                {me.teams.map((candidate) => (
                  <option key={candidate.id} value={candidate.id}>
                    {candidate.name}
                  </option>
                ))}
              </select>
            </>
          ) : null}
          <button type="submit" class="primary" disabled={busy || name.trim() === ''}>
            Create token
          </button>
        </form>
        {created ? (
          <NewToken
            created={created}
            teamName={teamName(created.teamId)}
            onDone={() => setCreated(undefined)}
          />
        ) : null}
      </section>
      <ErrorNotice error={error ?? list.error} />
      <section aria-labelledby="your-tokens">
        <h2 id="your-tokens">Your tokens</h2>
        {list.items.length === 0 && !list.loading ? <p class="muted">You have no API tokens.</p> : null}
        {list.items.length > 0 ? (
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
                {list.items.map((token) => (
                  <tr key={token.id}>
                    <td data-label="Name">{token.name}</td>
                    <td data-label="Team">{teamName(token.teamId)}</td>
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
                        <button type="button" class="danger" onClick={() => setRevoking(token)}>
                          Revoke
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : null}
        <LoadMore list={list} what="tokens" />
      </section>
      {revoking ? (
        <ConfirmDialog
          title={`Revoke “${revoking.name}”?`}
          confirmLabel="Revoke"
          danger
          onConfirm={() => void revoke(revoking)}
          onCancel={() => setRevoking(undefined)}
        >
          <p>
            Scripts using <code>{revoking.hint}</code> are refused within 30 seconds. This cannot be undone;
            create a new token if you need one again.
          </p>
        </ConfirmDialog>
      ) : null}
    </>
  );
}

function tokenStatus(token: ApiToken): string {
  if (token.revokedAt) return 'revoked';
  if (token.expiresAt && Date.parse(token.expiresAt) <= Date.now()) return 'expired';
  return token.expiresAt ? `active until ${new Date(token.expiresAt).toLocaleDateString()}` : 'active';
}

function NewToken(props: { created: CreatedToken; teamName: string; onDone: () => void }) {
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
