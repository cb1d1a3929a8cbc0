/**
 * The audit log on Settings → Events: who changed what, newest first, filtered by event type and
 * pipeline; each actor shown by name (an API token's name, a person's email) with the id on hover.
 */
import { useState } from 'preact/hooks';
import type { ResponseBody } from '../../../cli/client.ts';
import { EVENT_TYPES } from '../../../lambdas/core/event-types.ts';
import { api, client } from '../api.ts';
import { ErrorNotice, Person, Time, useLoad } from '../ui.tsx';
import { PagedItems, usePagedList } from './pipelines.tsx';

type AuditEvent = ResponseBody<'list-audit-events'>['items'][number];
type EventType = (typeof EVENT_TYPES)[number];

/** The resources an audit event names, in words: "pipeline p1 · run r1 · approved". */
function whatOf(event: AuditEvent): string {
  const { data } = event;
  const named: Array<[string, string | undefined]> = [
    ['pipeline', data.pipelineId],
    ['run', data.runId],
    ['rollout', data.rolloutId],
    ['configuration', data.configurationId],
    ['API token', data.tokenId],
    ['webhook', data.webhookId],
  ];
  const parts = named.flatMap(([what, id]) => (id ? [`${what} ${id}`] : []));
  if (data.status) parts.push(data.status);
  return parts.length > 0 ? parts.join(' · ') : `team ${data.teamId}`;
}

/** Who acted: the API token's name or the person's email, how they signed in; ids when gone. */
function Actor({ actor }: { actor: AuditEvent['data']['actor'] }) {
  if (actor.credential === 'system') return <>the service</>;
  const id = actor.tokenId ?? actor.userId;
  return (
    <>
      <Person name={actor.name} id={id} />{' '}
      <span class="muted small">({actor.credential === 'api_token' ? 'API token' : 'signed in'})</span>
    </>
  );
}

export function AuditLog(props: { changes: number }) {
  const [type, setType] = useState<EventType | ''>('');
  const [pipelineId, setPipelineId] = useState('');
  const pipelines = useLoad(() => api(client.GET('/pipelines', { params: { query: { limit: 100 } } })), []);
  const list = usePagedList(
    (query) =>
      api(
        client.GET('/audit-events', {
          params: { query: { ...query, ...(type ? { type } : {}), ...(pipelineId ? { pipelineId } : {}) } },
        }),
      ),
    `audit-${props.changes}-${type}-${pipelineId}`,
  );
  return (
    <section aria-labelledby="audit-log">
      <h2 id="audit-log">Audit log</h2>
      <form class="inline-form audit-filters" onSubmit={(event) => event.preventDefault()}>
        <label for="audit-type">Event type</label>
        <select
          id="audit-type"
          value={type}
          onChange={(event) => setType(event.currentTarget.value as EventType | '')}
        >
          <option value="">All types</option>
          {EVENT_TYPES.map((name) => (
            <option key={name} value={name}>
              {name}
            </option>
          ))}
        </select>
        <label for="audit-pipeline">Pipeline</label>
        <select
          id="audit-pipeline"
          value={pipelineId}
          onChange={(event) => setPipelineId(event.currentTarget.value)}
        >
          <option value="">All pipelines</option>
          {(pipelines.data?.items ?? []).map((pipeline) => (
            <option key={pipeline.id} value={pipeline.id}>
              {pipeline.name}
            </option>
          ))}
        </select>
      </form>
      <ErrorNotice error={list.error} />
      <PagedItems list={list} empty="No events yet." what="events">
        {(items) => (
          <div class="table-scroll">
            <table class="list cards-on-phone">
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Event</th>
                  <th scope="col">Who</th>
                  <th scope="col">What</th>
                </tr>
              </thead>
              <tbody>
                {items.map((event: AuditEvent) => (
                  <tr key={event.id}>
                    <td data-label="When">
                      <Time iso={event.timestamp} />
                    </td>
                    <td data-label="Event">{event.type}</td>
                    <td data-label="Who">
                      <Actor actor={event.data.actor} />
                    </td>
                    <td data-label="What">{whatOf(event)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </PagedItems>
    </section>
  );
}
