/**
 * A pipeline's signals, newest first: by kind, severity, slot and a time window (GET …/signals),
 * a page at a time, each with its value and a link to the execution it cites.
 */
import { useState } from 'preact/hooks';
import type { ResponseBody } from '../../../cli/client.ts';
import { api, client } from '../api.ts';
import { formatValue } from '../format.ts';
import { Link } from '../router.tsx';
import { ErrorNotice, Time } from '../ui.tsx';
import { PagedItems, usePagedList } from './pipelines.tsx';

type Signal = ResponseBody<'list-signals'>['items'][number];
const SEVERITIES = ['info', 'warning', 'critical'] as const;

/** What the listing asks for; empty fields ask for everything. */
interface Filters {
  kind: string;
  severity: '' | (typeof SEVERITIES)[number];
  slotId: string;
  /** `datetime-local` values, in the browser's time zone. */
  from: string;
  to: string;
}
const NONE: Filters = { kind: '', severity: '', slotId: '', from: '', to: '' };

/** A `datetime-local` value as the API's UTC time; undefined when empty or not a time. */
function utc(local: string): string | undefined {
  const time = local ? new Date(local) : undefined;
  return time && !Number.isNaN(time.getTime()) ? time.toISOString() : undefined;
}

/** The filters as the API's query: only those set. */
function queryOf(filters: Filters) {
  const since = utc(filters.from);
  const until = utc(filters.to);
  return {
    ...(filters.kind.trim() ? { kind: filters.kind.trim() } : {}),
    ...(filters.severity ? { severity: filters.severity } : {}),
    ...(filters.slotId.trim() ? { slotId: filters.slotId.trim() } : {}),
    ...(since ? { since } : {}),
    ...(until ? { until } : {}),
  };
}

/** The signals browser of a pipeline's page. */
export function Signals({ pipelineId }: { pipelineId: string }) {
  // The form's fields as typed, and the filters the list shows (applied with the button).
  const [draft, setDraft] = useState<Filters>(NONE);
  const [shown, setShown] = useState<Filters>(NONE);
  const query = queryOf(shown);
  const list = usePagedList(
    (page) =>
      api(
        client.GET('/pipelines/{pipelineId}/signals', {
          params: { path: { pipelineId }, query: { ...page, ...query } },
        }),
      ),
    `signals of ${pipelineId} ${JSON.stringify(query)}`,
  );
  const field = (name: keyof Filters) => ({
    id: `signals-${name}`,
    value: draft[name],
    onInput: (event: Event) =>
      setDraft({ ...draft, [name]: (event.currentTarget as HTMLInputElement).value }),
  });
  const filtered = Object.keys(query).length > 0;
  return (
    <section aria-labelledby="signals">
      <h2 id="signals">Signals</h2>
      <form
        class="inline-form signal-filters"
        aria-label="Filter signals"
        onSubmit={(event) => {
          event.preventDefault();
          setShown(draft);
        }}
      >
        <div class="filter">
          <label for="signals-kind">Kind</label>
          <input {...field('kind')} placeholder="e.g. relevance" autocomplete="off" />
        </div>
        <div class="filter">
          <label for="signals-severity">Severity</label>
          <select
            id="signals-severity"
            value={draft.severity}
            onChange={(event) =>
              setDraft({ ...draft, severity: event.currentTarget.value as Filters['severity'] })
            }
          >
            <option value="">Any severity</option>
            {SEVERITIES.map((severity) => (
              <option key={severity} value={severity}>
                {severity}
              </option>
            ))}
          </select>
        </div>
        <div class="filter">
          <label for="signals-slotId">Slot</label>
          <input {...field('slotId')} placeholder="e.g. answer-model" autocomplete="off" />
        </div>
        <div class="filter">
          <label for="signals-from">From</label>
          <input {...field('from')} type="datetime-local" />
        </div>
        <div class="filter">
          <label for="signals-to">To</label>
          <input {...field('to')} type="datetime-local" />
        </div>
        <button type="submit">Show</button>
        {filtered ? (
          <button
            type="button"
            onClick={() => {
              setDraft(NONE);
              setShown(NONE);
            }}
          >
            Clear
          </button>
        ) : null}
      </form>
      <ErrorNotice error={list.error} />
      <PagedItems
        list={list}
        empty={filtered ? 'No signals match these filters.' : 'No signals recorded yet.'}
        what="signals"
      >
        {(items) => <SignalTable pipelineId={pipelineId} items={items} />}
      </PagedItems>
    </section>
  );
}

/** A page of signals as a table (cards on a phone), each linking to the execution it cites. */
function SignalTable({ pipelineId, items }: { pipelineId: string; items: Signal[] }) {
  return (
    <div class="table-scroll">
      <table class="list cards-on-phone" aria-label="Signals">
        <thead>
          <tr>
            <th scope="col">Occurred</th>
            <th scope="col">Severity</th>
            <th scope="col">Kind</th>
            <th scope="col">Slot</th>
            <th scope="col">Value</th>
            <th scope="col">Message</th>
            <th scope="col">Execution</th>
          </tr>
        </thead>
        <tbody>
          {items.map((signal: Signal) => (
            <tr key={signal.id}>
              <td data-label="Occurred">
                <Time iso={signal.occurredAt} />
              </td>
              <td data-label="Severity">{signal.severity}</td>
              <td data-label="Kind">{signal.kind}</td>
              <td data-label="Slot">{signal.slotId ?? '—'}</td>
              <td data-label="Value">{signal.value === undefined ? '—' : formatValue(signal.value)}</td>
              <td data-label="Message">{signal.message}</td>
              <td data-label="Execution">
                {signal.executionId ? (
                  <Link
                    to={`pipelines/${encodeURIComponent(pipelineId)}/executions/${encodeURIComponent(signal.executionId)}`}
                    aria-label={`Execution ${signal.executionId}`}
                  >
                    open
                  </Link>
                ) : (
                  '—'
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
