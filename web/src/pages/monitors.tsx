/**
 * A pipeline's monitors (GET/POST/DELETE …/monitors): each one's state in words, since when and the
 * last value with its unit; a form to add one and a confirmed delete for admins and members.
 */
import { useState } from 'preact/hooks';
import type { operations, ResponseBody } from '../../../cli/client.ts';
import { api, client } from '../api.ts';
import { formatCount } from '../format.ts';
import { useSession } from '../session.ts';
import { ConfirmDialog, ErrorNotice, Time } from '../ui.tsx';
import { PagedItems, useConfirmedRemoval, usePagedList } from './pipelines.tsx';

type Monitor = ResponseBody<'list-monitors'>['items'][number];
type Metric = Monitor['metric'];
type NewMonitor = operations['create-monitor']['requestBody']['content']['application/json'];

/** Each metric: its name in words, and how its values (and thresholds) read. */
const METRICS: Record<Metric, { label: string; unit: (value: number) => string; hint: string }> = {
  failure_rate: {
    label: 'Failure rate',
    unit: (value) => `${formatNumber(value * 100)} %`,
    hint: 'a ratio from 0 to 1, e.g. 0.05 for 5 %',
  },
  duration_p95: { label: 'Duration p95', unit: (value) => `${formatNumber(value)} ms`, hint: 'milliseconds' },
  duration_mean: {
    label: 'Mean duration',
    unit: (value) => `${formatNumber(value)} ms`,
    hint: 'milliseconds',
  },
  tokens_mean: {
    label: 'Tokens per execution',
    unit: (value) => `${formatNumber(value)} tokens`,
    hint: 'tokens per execution',
  },
  signal_mean: {
    label: 'Mean score of a signal kind',
    unit: (value) => formatNumber(value),
    hint: "the kind's values",
  },
  executions: {
    label: 'Executions',
    unit: (value) => `${formatCount(value)} executions`,
    hint: 'executions in the window',
  },
};

const STATES: Record<Monitor['state'], string> = { ok: 'OK', alert: 'Alert', no_data: 'No data' };

function formatNumber(value: number): string {
  return Number(value.toPrecision(4)).toLocaleString('en');
}

/** "Failure rate above 5 % over 15 min (at least 20 executions)". */
function ruleOf(monitor: Monitor): string {
  const metric = METRICS[monitor.metric];
  const what = monitor.kind ? `${metric.label} (${monitor.kind})` : metric.label;
  const least =
    monitor.metric === 'executions'
      ? ''
      : ` (at least ${formatCount(monitor.minExecutions)} ${monitor.metric === 'signal_mean' ? 'scores' : 'executions'})`;
  return `${what} ${monitor.comparator} ${metric.unit(monitor.threshold)} over ${monitor.windowMinutes} min${least}`;
}

/** The Monitors section of a pipeline's page. */
export function Monitors({ pipelineId }: { pipelineId: string }) {
  const { canWrite } = useSession();
  const list = usePagedList(
    (query) =>
      api(client.GET('/pipelines/{pipelineId}/monitors', { params: { path: { pipelineId }, query } })),
    `monitors of ${pipelineId}`,
  );
  const [error, setError] = useState<unknown>();
  const deleting = useConfirmedRemoval(
    list,
    (monitor: Monitor) =>
      api(
        client.DELETE('/pipelines/{pipelineId}/monitors/{monitorId}', {
          params: { path: { pipelineId, monitorId: monitor.id } },
        }),
      ),
    setError,
  );
  const asked = deleting.asking;
  return (
    <section aria-labelledby="monitors">
      <h2 id="monitors">Monitors</h2>
      <p class="muted">
        Judged every minute over their window; a change of state is sent to the team's webhooks.
      </p>
      <ErrorNotice error={error ?? list.error} />
      <PagedItems list={list} empty="No monitors yet." what="monitors">
        {(items) => (
          <div class="table-scroll">
            <table class="list cards-on-phone" aria-label="Monitors">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">State</th>
                  <th scope="col">Since</th>
                  <th scope="col">Last value</th>
                  <th scope="col">Rule</th>
                  {canWrite ? (
                    <th scope="col">
                      <span class="visually-hidden">Actions</span>
                    </th>
                  ) : null}
                </tr>
              </thead>
              <tbody>
                {items.map((monitor) => (
                  <tr key={monitor.id}>
                    <td data-label="Name">{monitor.name}</td>
                    <td data-label="State">
                      <span class={`status monitor-${monitor.state}`}>{STATES[monitor.state]}</span>
                    </td>
                    <td data-label="Since">
                      <Time iso={monitor.since} />
                    </td>
                    <td data-label="Last value">
                      {monitor.lastValue === null ? '—' : METRICS[monitor.metric].unit(monitor.lastValue)}
                    </td>
                    <td data-label="Rule">{ruleOf(monitor)}</td>
                    {canWrite ? (
                      <td>
                        <button
                          type="button"
                          class="danger"
                          aria-label={`Delete monitor ${monitor.name}`}
                          onClick={() => deleting.ask(monitor)}
                        >
                          Delete
                        </button>
                      </td>
                    ) : null}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </PagedItems>
      {canWrite ? <AddMonitor pipelineId={pipelineId} onCreated={list.reload} onError={setError} /> : null}
      {asked ? (
        <ConfirmDialog
          title={`Delete the monitor "${asked.name}"?`}
          confirmLabel="Delete"
          danger
          onConfirm={() => void deleting.confirm(asked)}
          onCancel={deleting.cancel}
        >
          <p>
            It is judged no more, and no one is told of this pipeline's{' '}
            {METRICS[asked.metric].label.toLowerCase()}.
          </p>
        </ConfirmDialog>
      ) : null}
    </section>
  );
}

interface Draft {
  name: string;
  metric: Metric;
  kind: string;
  comparator: 'above' | 'below';
  threshold: string;
  windowMinutes: string;
  minExecutions: string;
}
const EMPTY: Draft = {
  name: '',
  metric: 'failure_rate',
  kind: '',
  comparator: 'above',
  threshold: '',
  windowMinutes: '15',
  minExecutions: '',
};

function bodyOf(draft: Draft): NewMonitor {
  return {
    name: draft.name.trim(),
    metric: draft.metric,
    ...(draft.metric === 'signal_mean' ? { kind: draft.kind.trim() } : {}),
    comparator: draft.comparator,
    threshold: Number(draft.threshold),
    windowMinutes: Number(draft.windowMinutes),
    ...(draft.minExecutions.trim() ? { minExecutions: Number(draft.minExecutions) } : {}),
  };
}

function AddMonitor(props: { pipelineId: string; onCreated: () => void; onError: (error: unknown) => void }) {
  const [draft, setDraft] = useState<Draft>(EMPTY);
  const [busy, setBusy] = useState(false);
  const field = (name: keyof Draft) => ({
    id: `monitor-${name}`,
    value: draft[name],
    onInput: (event: Event) =>
      setDraft({ ...draft, [name]: (event.currentTarget as HTMLInputElement).value }),
  });
  const add = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    props.onError(undefined);
    try {
      await api(
        client.POST('/pipelines/{pipelineId}/monitors', {
          params: { path: { pipelineId: props.pipelineId } },
          body: bodyOf(draft),
        }),
      );
      setDraft(EMPTY);
      props.onCreated();
    } catch (caught) {
      props.onError(caught);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="card inline-form monitor-form" aria-labelledby="add-monitor" onSubmit={add}>
      <h3 id="add-monitor">Add a monitor</h3>
      <div class="field">
        <label for="monitor-name">Name</label>
        <input {...field('name')} required maxLength={100} placeholder="e.g. Failures over 5 %" />
      </div>
      <div class="field">
        <label for="monitor-metric">Metric</label>
        <select
          id="monitor-metric"
          value={draft.metric}
          onChange={(event) => setDraft({ ...draft, metric: event.currentTarget.value as Metric })}
        >
          {(Object.keys(METRICS) as Metric[]).map((metric) => (
            <option key={metric} value={metric}>
              {METRICS[metric].label}
            </option>
          ))}
        </select>
      </div>
      {draft.metric === 'signal_mean' ? (
        <div class="field">
          <label for="monitor-kind">Signal kind</label>
          <input {...field('kind')} required placeholder="e.g. relevance" autocomplete="off" />
        </div>
      ) : null}
      <div class="field">
        <label for="monitor-comparator">Alert when</label>
        <select
          id="monitor-comparator"
          value={draft.comparator}
          onChange={(event) =>
            setDraft({ ...draft, comparator: event.currentTarget.value as Draft['comparator'] })
          }
        >
          <option value="above">above the threshold</option>
          <option value="below">below the threshold</option>
        </select>
      </div>
      <div class="field">
        <label for="monitor-threshold">Threshold ({METRICS[draft.metric].hint})</label>
        <input {...field('threshold')} required type="number" step="any" inputMode="decimal" />
      </div>
      <div class="field">
        <label for="monitor-windowMinutes">Window (minutes, 5–1440)</label>
        <input {...field('windowMinutes')} required type="number" min={5} max={1440} step={1} />
      </div>
      <div class="field">
        <label for="monitor-minExecutions">At least (samples; 1 when empty)</label>
        <input {...field('minExecutions')} type="number" min={1} step={1} />
      </div>
      <button type="submit" class="primary" disabled={busy}>
        Add monitor
      </button>
    </form>
  );
}
