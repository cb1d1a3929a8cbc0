/**
 * Settings → Events: the team's webhooks (add one, its signing secret shown once; its deliveries;
 * delete one after confirmation) and the audit log (who changed what, newest first). Viewers see
 * the webhooks but may neither change them nor read the audit log.
 */
import { useState } from 'preact/hooks';
import type { ResponseBody } from '../../../cli/client.ts';
import { EVENT_TYPES } from '../../../lambdas/core/event-types.ts';
import { api, client } from '../api.ts';
import { useSession } from '../session.ts';
import { ConfirmDialog, ErrorNotice, Time, useTitle } from '../ui.tsx';
import { AuditLog } from './audit.tsx';
import { PagedItems, useConfirmedRemoval, usePagedList } from './pipelines.tsx';

type Webhook = ResponseBody<'list-webhooks'>['items'][number];
type EventType = (typeof EVENT_TYPES)[number];
type CreatedWebhook = ResponseBody<'create-webhook', 201>;
type Delivery = ResponseBody<'list-webhook-deliveries'>['items'][number];

export function EventsPage() {
  useTitle('Webhooks and audit log');
  const { canWrite } = useSession();
  // Adding or deleting a webhook is itself an event: the audit log reads again after each.
  const [changes, setChanges] = useState(0);
  const changed = () => setChanges((count) => count + 1);
  return (
    <>
      <h1>Webhooks and audit log</h1>
      <p class="muted">
        Webhooks receive the team's events as signed POSTs (Standard Webhooks): a run generated or failed, a
        proposal approved, a configuration activated, a token created.
      </p>
      <Webhooks onChanged={changed} />
      {canWrite ? (
        <AuditLog changes={changes} />
      ) : (
        <p class="muted">The audit log is for admins and members.</p>
      )}
    </>
  );
}

function Webhooks(props: { onChanged: () => void }) {
  const { canWrite } = useSession();
  const list = usePagedList(() => api(client.GET('/webhooks')), 'webhooks');
  const reload = () => {
    list.reload();
    props.onChanged();
  };
  const [error, setError] = useState<unknown>();
  const [showing, setShowing] = useState<string>();
  const deleting = useConfirmedRemoval(
    { reload },
    (webhook: Webhook) => api(client.DELETE('/webhooks/{id}', { params: { path: { id: webhook.id } } })),
    setError,
  );
  const asked = deleting.asking;

  return (
    <section aria-labelledby="webhooks">
      <h2 id="webhooks">Webhooks</h2>
      {canWrite ? <AddWebhook onCreated={reload} onError={setError} /> : null}
      <ErrorNotice error={error ?? list.error} />
      <PagedItems list={list} empty="No webhooks yet." what="webhooks">
        {(items) => (
          <div class="table-scroll">
            <table class="list cards-on-phone">
              <thead>
                <tr>
                  <th scope="col">URL</th>
                  <th scope="col">Events</th>
                  <th scope="col">Created</th>
                  <th scope="col">Status</th>
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {items.map((webhook) => (
                  <tr key={webhook.id}>
                    <td data-label="URL">
                      <code>{webhook.url}</code>
                      {webhook.description ? <div class="muted">{webhook.description}</div> : null}
                    </td>
                    <td data-label="Events">
                      {webhook.allEventTypes ? 'every type, new ones too' : webhook.eventTypes.join(', ')}
                    </td>
                    <td data-label="Created">
                      <Time iso={webhook.createdAt} />
                    </td>
                    <td data-label="Status">
                      {webhook.disabledAt ? 'disabled (410 Gone)' : 'active'}
                      {webhook.format === 'slack' ? ' · Slack' : ''}
                    </td>
                    <td>
                      <button
                        type="button"
                        onClick={() => setShowing(showing === webhook.id ? undefined : webhook.id)}
                      >
                        Deliveries
                      </button>
                      {canWrite ? (
                        <button type="button" class="danger" onClick={() => deleting.ask(webhook)}>
                          Delete
                        </button>
                      ) : null}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </PagedItems>
      {showing ? <Deliveries webhookId={showing} /> : null}
      {asked ? (
        <ConfirmDialog
          title={`Delete the webhook to ${asked.url}?`}
          confirmLabel="Delete"
          danger
          onConfirm={() => void deleting.confirm(asked)}
          onCancel={deleting.cancel}
        >
          <p>It receives nothing more, not even events already on their way.</p>
        </ConfirmDialog>
      ) : null}
    </section>
  );
}

/** The event types a new webhook receives: all by default, each one a checkbox beside its name. */
function EventTypesChooser({
  types,
  onChange,
}: {
  types: Set<EventType>;
  onChange: (types: Set<EventType>) => void;
}) {
  return (
    <fieldset class="event-types">
      <legend>Events to receive</legend>
      <label class="check">
        <input
          type="checkbox"
          checked={types.size === EVENT_TYPES.length}
          onChange={(event) => onChange(new Set(event.currentTarget.checked ? EVENT_TYPES : []))}
        />
        All {EVENT_TYPES.length}
      </label>
      {EVENT_TYPES.map((type) => (
        <label key={type} class="check">
          <input
            type="checkbox"
            name="event-type"
            value={type}
            checked={types.has(type)}
            onChange={(event) => {
              const next = new Set(types);
              if (event.currentTarget.checked) next.add(type);
              else next.delete(type);
              onChange(next);
            }}
          />
          <code>{type}</code>
        </label>
      ))}
    </fieldset>
  );
}

function AddWebhook(props: { onCreated: () => void; onError: (error: unknown) => void }) {
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [busy, setBusy] = useState(false);
  const [created, setCreated] = useState<CreatedWebhook>();
  const [types, setTypes] = useState<Set<EventType>>(new Set(EVENT_TYPES));
  const [format, setFormat] = useState<'standard' | 'slack'>('standard');

  const add = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    props.onError(undefined);
    try {
      const body = {
        url: url.trim(),
        ...(description.trim() ? { description: description.trim() } : {}),
        ...(format === 'slack' ? { format } : {}),
        // Every type is the API's default; a choice is sent in the list's order.
        ...(types.size === EVENT_TYPES.length
          ? {}
          : { eventTypes: EVENT_TYPES.filter((type) => types.has(type)) }),
      };
      setCreated(await api(client.POST('/webhooks', { body })));
      setUrl('');
      setDescription('');
      props.onCreated();
    } catch (caught) {
      props.onError(caught);
    } finally {
      setBusy(false);
    }
  };

  return (
    <div class="card">
      <form class="inline-form" method="post" onSubmit={add}>
        <label for="webhook-url">URL</label>
        <input
          id="webhook-url"
          required
          type="url"
          placeholder="https://hooks.example.com/pipeline-synthesis"
          value={url}
          onInput={(event) => setUrl(event.currentTarget.value)}
        />
        <EventTypesChooser types={types} onChange={setTypes} />
        <label for="webhook-description">Description</label>
        <input
          id="webhook-description"
          maxLength={500}
          value={description}
          onInput={(event) => setDescription(event.currentTarget.value)}
        />
        <label for="webhook-format">Format</label>
        <select
          id="webhook-format"
          value={format}
          onChange={(event) => setFormat(event.currentTarget.value as 'standard' | 'slack')}
        >
          <option value="standard">Standard Webhooks (signed)</option>
          <option value="slack">Slack message (unsigned: the URL is the secret)</option>
        </select>
        <button type="submit" class="primary" disabled={busy || url.trim() === '' || types.size === 0}>
          Add webhook
        </button>
      </form>
      {created ? (
        <section class="notice notice-warning" aria-label="New webhook secret">
          <p>
            <strong>Copy this signing secret now: it is shown only this once.</strong> The receiver verifies
            every delivery with it.
          </p>
          <label for="new-webhook-secret">Secret of {created.url}</label>
          <input
            id="new-webhook-secret"
            readOnly
            value={created.secret}
            onFocus={(event) => event.currentTarget.select()}
          />
          <div class="actions">
            <button type="button" onClick={() => setCreated(undefined)}>
              I have copied it
            </button>
          </div>
        </section>
      ) : null}
    </div>
  );
}

function Deliveries(props: { webhookId: string }) {
  const list = usePagedList(
    (query) =>
      api(client.GET('/webhooks/{id}/deliveries', { params: { path: { id: props.webhookId }, query } })),
    `deliveries-${props.webhookId}`,
  );
  return (
    <section aria-labelledby="deliveries">
      <h3 id="deliveries">Deliveries</h3>
      <ErrorNotice error={list.error} />
      <PagedItems list={list} empty="No deliveries yet." what="deliveries">
        {(items) => (
          <table class="list">
            <thead>
              <tr>
                <th scope="col">Attempted</th>
                <th scope="col">Event</th>
                <th scope="col">Attempt</th>
                <th scope="col">Status</th>
                <th scope="col">Answer</th>
              </tr>
            </thead>
            <tbody>
              {items.map((delivery: Delivery) => (
                <tr key={delivery.id}>
                  <td>
                    <Time iso={delivery.attemptedAt} />
                  </td>
                  <td>{delivery.eventType}</td>
                  <td>{delivery.attempt}</td>
                  <td>{delivery.status}</td>
                  <td>{delivery.responseStatus ?? delivery.error ?? ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </PagedItems>
    </section>
  );
}
