/**
 * Settings → Members: the team's people with their names and roles; admins invite by email (a
 * sign-in link, valid once for 7 days), change roles, remove people (after a confirmation) and
 * withdraw pending invitations. The team switch is in the header.
 */
import { useState } from 'preact/hooks';
import type { ResponseBody } from '../../../cli/client.ts';
import { api, client } from '../api.ts';
import { useSession } from '../session.ts';
import { ConfirmDialog, ErrorNotice, Loading, Time, useLoad, useTitle } from '../ui.tsx';

type Member = ResponseBody<'list-team-members'>['items'][number];
type Role = Member['role'];
const ROLES: Role[] = ['admin', 'member', 'viewer'];
const ROLE_HELP = 'Admins manage the team and its people; members change pipelines; viewers read.';

export function MembersPage() {
  useTitle('Members');
  const { teamId, teamName, role, me } = useSession();
  const path = { teamId };
  const members = useLoad(() => api(client.GET('/teams/{teamId}/members', { params: { path } })), [teamId]);
  const isAdmin = role === 'admin';
  const [error, setError] = useState<unknown>();
  const [notice, setNotice] = useState<string>();
  const [removing, setRemoving] = useState<Member>();
  const [changes, setChanges] = useState(0);
  const act = async (what: () => Promise<unknown>, done: string) => {
    setError(undefined);
    setNotice(undefined);
    try {
      await what();
      setNotice(done);
      members.reload();
      setChanges((count) => count + 1);
    } catch (caught) {
      setError(caught);
    }
  };
  const setRole = (member: Member, next: Role) =>
    act(
      () =>
        api(
          client.PATCH('/teams/{teamId}/members/{userId}', {
            params: { path: { teamId, userId: member.userId } },
            body: { role: next },
          }),
        ),
      `${member.email} is now ${next}.`,
    );
  const remove = (member: Member) =>
    act(
      () =>
        api(
          client.DELETE('/teams/{teamId}/members/{userId}', {
            params: { path: { teamId, userId: member.userId } },
          }),
        ),
      `${member.email} was removed: their sessions and API tokens for ${teamName} no longer work.`,
    );
  return (
    <>
      <h1>Members of {teamName}</h1>
      <p class="muted">{ROLE_HELP}</p>
      {isAdmin ? <InviteForm teamId={teamId} onInvited={(text) => act(async () => {}, text)} /> : null}
      <div aria-live="polite">
        {notice ? <p class="notice notice-success">{notice}</p> : null}
        <ErrorNotice error={error} />
      </div>
      {!members.data ? (
        members.error ? (
          <ErrorNotice error={members.error} />
        ) : (
          <Loading what="the members" />
        )
      ) : (
        <MemberTable
          members={members.data.items}
          isAdmin={isAdmin}
          you={me.user.id}
          onRole={(member, next) => void setRole(member, next)}
          onRemove={setRemoving}
        />
      )}
      {isAdmin ? <Invitations teamId={teamId} changes={changes} onChange={act} /> : null}
      {removing ? (
        <ConfirmDialog
          title={`Remove ${removing.email}?`}
          confirmLabel="Remove"
          danger
          onCancel={() => setRemoving(undefined)}
          onConfirm={() => {
            const member = removing;
            setRemoving(undefined);
            void remove(member);
          }}
        >
          <p>
            Their sessions for {teamName} end at once and the API tokens they created in it are revoked. You
            can invite them again later.
          </p>
        </ConfirmDialog>
      ) : null}
    </>
  );
}

function MemberTable(props: {
  members: Member[];
  isAdmin: boolean;
  you: string;
  onRole: (member: Member, role: Role) => void;
  onRemove: (member: Member) => void;
}) {
  return (
    <div class="table-scroll">
      <table class="list cards-on-phone">
        <caption class="visually-hidden">Members, oldest first</caption>
        <thead>
          <tr>
            <th scope="col">Email</th>
            <th scope="col">Name</th>
            <th scope="col">Role</th>
            <th scope="col">Joined</th>
            {props.isAdmin ? <th scope="col">Actions</th> : null}
          </tr>
        </thead>
        <tbody>
          {props.members.map((member) => (
            <tr key={member.userId}>
              <td data-label="Email">
                {member.email}
                {member.userId === props.you ? <span class="muted small"> (you)</span> : null}
              </td>
              <td data-label="Name">{member.name}</td>
              <td data-label="Role">
                {props.isAdmin ? (
                  <select
                    aria-label={`Role of ${member.email}`}
                    value={member.role}
                    onChange={(event) => props.onRole(member, event.currentTarget.value as Role)}
                  >
                    {ROLES.map((name) => (
                      <option key={name} value={name}>
                        {name}
                      </option>
                    ))}
                  </select>
                ) : (
                  member.role
                )}
              </td>
              <td data-label="Joined">
                <Time iso={member.joinedAt} />
              </td>
              {props.isAdmin ? (
                <td data-label="Actions">
                  <button type="button" class="danger" onClick={() => props.onRemove(member)}>
                    Remove {member.email}
                  </button>
                </td>
              ) : null}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function InviteForm(props: { teamId: string; onInvited: (text: string) => void }) {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('member');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const invitation = await api(
        client.POST('/teams/{teamId}/invitations', {
          params: { path: { teamId: props.teamId } },
          body: { email, role },
        }),
      );
      setEmail('');
      props.onInvited(
        `Invitation sent to ${invitation.email} as ${invitation.role}. The link works once, until ${new Date(invitation.expiresAt).toLocaleString()}.`,
      );
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="invite" class="card">
      <h2 id="invite">Invite someone</h2>
      <form class="inline-form" onSubmit={submit}>
        <label for="invite-email">Email</label>
        <input
          id="invite-email"
          type="email"
          required
          autocomplete="off"
          value={email}
          onInput={(event) => setEmail(event.currentTarget.value)}
        />
        <label for="invite-role">Role</label>
        <select
          id="invite-role"
          value={role}
          onChange={(event) => setRole(event.currentTarget.value as Role)}
        >
          {ROLES.map((name) => (
            <option key={name} value={name}>
              {name}
            </option>
          ))}
        </select>
        <button type="submit" disabled={busy}>
          {busy ? 'Sending…' : 'Send invitation'}
        </button>
      </form>
      <p class="muted small">
        They get a sign-in link by email that adds them to the team; it creates their account if they have
        none.
      </p>
      <ErrorNotice error={error} />
    </section>
  );
}

function Invitations(props: {
  teamId: string;
  changes: number;
  onChange: (what: () => Promise<unknown>, done: string) => Promise<void>;
}) {
  const path = { teamId: props.teamId };
  const invitations = useLoad(
    () => api(client.GET('/teams/{teamId}/invitations', { params: { path, query: { limit: 50 } } })),
    [props.teamId, props.changes],
  );
  const pending = (invitations.data?.items ?? []).filter((item) => item.status === 'pending');
  return (
    <section aria-labelledby="invitations">
      <h2 id="invitations">Pending invitations</h2>
      <ErrorNotice error={invitations.error} />
      {pending.length === 0 ? (
        <p class="muted">None.</p>
      ) : (
        <ul>
          {pending.map((item) => (
            <li key={item.id}>
              {item.email} as {item.role} ·{' '}
              {item.expired ? (
                <strong>expired</strong>
              ) : (
                <>
                  until <Time iso={item.expiresAt} />
                </>
              )}{' '}
              <button
                type="button"
                onClick={() =>
                  void props.onChange(
                    () =>
                      api(
                        client.DELETE('/teams/{teamId}/invitations/{invitationId}', {
                          params: { path: { ...path, invitationId: item.id } },
                        }),
                      ),
                    `The invitation of ${item.email} was withdrawn.`,
                  )
                }
              >
                Withdraw {item.email}
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
