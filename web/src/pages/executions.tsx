/**
 * What a pipeline recorded, as it was recorded: its executions newest first (source: OpenTelemetry
 * traces or the API), and one execution's slots, error, input and the signals citing it.
 */
import type { ResponseBody } from '../../../cli/client.ts';
import { api, client } from '../api.ts';
import { formatDuration, formatValue } from '../format.ts';
import { Link } from '../router.tsx';
import { ErrorNotice, Loading, Time, useLoad, useTitle } from '../ui.tsx';
import { ExecutionFeedback } from './feedback.tsx';
import { PagedItems, usePagedList } from './pipelines.tsx';

type Execution = ResponseBody<'list-executions'>['items'][number];

type SlotResult = NonNullable<Execution['slotResults']>[number];
/** A slot's prompt-cache counts, when its trace reported them: read from and written to the cache. */
const cacheText = (slot: SlotResult) =>
  slot.cacheReadInputTokens === undefined && slot.cacheWriteInputTokens === undefined
    ? ''
    : ` (cache: ${slot.cacheReadInputTokens ?? 0} read, ${slot.cacheWriteInputTokens ?? 0} written)`;
const sourceOf = (execution: Execution) => (execution.source === 'otlp' ? 'OpenTelemetry' : 'API');

/** The pipeline's executions, on its page. */
export function Executions({ pipelineId }: { pipelineId: string }) {
  const list = usePagedList(
    (query) =>
      api(client.GET('/pipelines/{pipelineId}/executions', { params: { path: { pipelineId }, query } })),
    `executions of ${pipelineId}`,
  );
  return (
    <section aria-labelledby="executions">
      <h2 id="executions">Executions</h2>
      <ErrorNotice error={list.error} />
      <PagedItems list={list} empty="No executions recorded yet." what="executions">
        {(items) => (
          <div class="table-scroll">
            <table class="list cards-on-phone">
              <thead>
                <tr>
                  <th scope="col">Started</th>
                  <th scope="col">Status</th>
                  <th scope="col">Duration</th>
                  <th scope="col">Slots</th>
                  <th scope="col">Source</th>
                </tr>
              </thead>
              <tbody>
                {items.map((execution: Execution) => (
                  <tr key={execution.id}>
                    <td data-label="Started">
                      <Link
                        to={`pipelines/${encodeURIComponent(pipelineId)}/executions/${encodeURIComponent(execution.id)}`}
                        aria-label={`Execution ${execution.id}`}
                      >
                        <Time iso={execution.startedAt} />
                      </Link>
                    </td>
                    <td data-label="Status">{execution.status}</td>
                    <td data-label="Duration">{formatDuration(execution.durationMs)}</td>
                    <td data-label="Slots">
                      {(execution.slotResults ?? [])
                        .map((slot) => `${slot.slotId}${slot.status === 'failed' ? ' (failed)' : ''}`)
                        .join(', ') || '—'}
                    </td>
                    <td data-label="Source">{sourceOf(execution)}</td>
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

/** An execution with the signals citing it, its pipeline's name and its configuration's version. */
async function loadExecution(pipelineId: string, executionId: string) {
  const [found, pipeline] = await Promise.all([
    api(
      client.GET('/pipelines/{pipelineId}/executions/{executionId}', {
        params: { path: { pipelineId, executionId } },
      }),
    ),
    api(client.GET('/pipelines/{pipelineId}', { params: { path: { pipelineId } } })),
  ]);
  // The configuration it ran, by its version (a configuration retention removed reads as its id).
  const configuration = await api(
    client.GET('/pipelines/{pipelineId}/configurations/{configurationId}', {
      params: { path: { pipelineId, configurationId: found.execution.configurationId } },
    }),
  ).catch(() => undefined);
  return { ...found, pipelineName: pipeline.name, version: configuration?.version };
}

/** A configuration by its version; by its id when it could not be read (retention removed it). */
function ConfigurationName({ id, version }: { id: string; version: number | undefined }) {
  if (version === undefined)
    return (
      <>
        configuration <code>{id}</code>
      </>
    );
  return <>configuration version {version}</>;
}

/** One execution: status, source, error, its slots and the signals citing it. */
export function ExecutionPage({ pipelineId, executionId }: { pipelineId: string; executionId: string }) {
  useTitle('Execution');
  const loaded = useLoad(() => loadExecution(pipelineId, executionId), [pipelineId, executionId]);
  const crumbs = (
    <nav aria-label="Breadcrumbs" class="breadcrumbs">
      <Link to="">Pipelines</Link> ›{' '}
      <Link to={`pipelines/${encodeURIComponent(pipelineId)}`}>
        {loaded.data?.pipelineName ?? 'Pipeline'}
      </Link>
    </nav>
  );
  if (!loaded.data) {
    return (
      <>
        {crumbs}
        {loaded.error ? <ErrorNotice error={loaded.error} /> : <Loading what="the execution" />}
      </>
    );
  }
  const { execution, signals, version } = loaded.data;
  return (
    <>
      {crumbs}
      <h1>
        Execution {execution.status} in {formatDuration(execution.durationMs)}
      </h1>
      <p class="muted small">
        <code>{execution.id}</code> · started <Time iso={execution.startedAt} /> · source{' '}
        <strong>{sourceOf(execution)}</strong> ·{' '}
        <ConfigurationName id={execution.configurationId} version={version} />
      </p>
      {execution.error ? (
        <div class="notice notice-error">
          <p>{execution.error}</p>
        </div>
      ) : null}
      <section aria-labelledby="slots">
        <h2 id="slots">Slots</h2>
        {(execution.slotResults ?? []).length === 0 ? (
          <p class="muted">No slot results.</p>
        ) : (
          <div class="table-scroll">
            <table class="list cards-on-phone">
              <thead>
                <tr>
                  <th scope="col">Slot</th>
                  <th scope="col">Status</th>
                  <th scope="col">Duration</th>
                  <th scope="col">Tokens in / out</th>
                  <th scope="col">Error</th>
                </tr>
              </thead>
              <tbody>
                {(execution.slotResults ?? []).map((slot) => (
                  <tr key={slot.slotId}>
                    <td data-label="Slot">{slot.slotId}</td>
                    <td data-label="Status">{slot.status}</td>
                    <td data-label="Duration">{formatDuration(slot.durationMs)}</td>
                    <td data-label="Tokens in / out">
                      {slot.inputTokens === undefined
                        ? '—'
                        : `${slot.inputTokens} / ${slot.outputTokens ?? 0}${cacheText(slot)}`}
                    </td>
                    <td data-label="Error">{slot.error ?? '—'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      <section aria-labelledby="citing-signals">
        <h2 id="citing-signals">Signals citing it</h2>
        {signals.length === 0 ? (
          <p class="muted">No signals cite this execution.</p>
        ) : (
          <ul>
            {signals.map((signal) => (
              <li key={signal.id}>
                <strong>{signal.kind}</strong> ({signal.severity}){signal.slotId ? ` · ${signal.slotId}` : ''}
                {signal.value === undefined ? '' : ` · ${formatValue(signal.value)}`} — {signal.message}
              </li>
            ))}
          </ul>
        )}
      </section>
      <ExecutionFeedback {...{ pipelineId, executionId, signals }} onRecorded={loaded.reload} />
      {execution.input === undefined ? null : (
        <section aria-labelledby="input">
          <h2 id="input">Input</h2>
          <pre class="value">{JSON.stringify(execution.input, null, 2)}</pre>
        </section>
      )}
    </>
  );
}
