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

/**
 * The resources an audit event names, in words: `pipeline "support bot" · version 3 · approved`.
 * Ids stay on hover; a run or a rollout is named by its short id, being no more than that.
 */
function whatOf(event: AuditEvent): string {
  const { data } = event;
  const short = (id: string) => `${id.slice(0, 8)}…`;
  const parts: string[] = [];
  if (data.pipelineId) parts.push(`pipeline "${data.pipelineName ?? short(data.pipelineId)}"`);
  if (data.configurationId)
    parts.push(data.configurationVersion ? `version ${data.configurationVersion}` : 'a configuration');
  if (data.runId) parts.push(`run ${short(data.runId)}`);
  if (data.rolloutId) parts.push('rollout');
  if (data.memberId) parts.push(data.memberName ?? 'a former member');
  if (data.role) parts.push(`as ${data.role}`);
  if (data.tokenId) parts.push('an API token');
  if (data.webhookId) parts.push(`webhook ${short(data.webhookId)}`);
  if (data.status) parts.push(data.status);
  return parts.length > 0 ? parts.join(' · ') : 'the team';
}

function idsOf(event: AuditEvent): string {
  const { data } = event;
  return [
    data.pipelineId,
    data.configurationId,
    data.runId,
    data.rolloutId,
    data.memberId,
    data.tokenId,
    data.webhookId,
  ]
    .filter(Boolean)
    .join(' · ');
}

/** Who acted: the API token's name or the person's email, how they signed in; ids when gone. */
function Actor({ actor }: { actor: AuditEvent['data']['actor'] }) {
  if (actor.credential === 'system') return <>the service</>;
  const id = actor.tokenId ?? actor.userId;
  return (
    <>
      <Person name={actor.name} id={id} />{' '}
      {actor.credential === 'session' ? <span class="muted small">(signed in)</span> : null}
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
                    <td data-label="What" title={idsOf(event)}>
                      {whatOf(event)}
                    </td>
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
