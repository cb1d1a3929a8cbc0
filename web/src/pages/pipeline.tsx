/**
 * One pipeline: start a synthesis run, its rollout (or how the last one ended), its active
 * configuration (slots and settings), its runs with their status and rollout outcome, and its
 * configuration history (approvals, promotions, roll backs) with roll back.
 */
import { useState } from 'preact/hooks';
import {
  SYNTHESIS_HANDLER_NAMES,
  type SynthesisHandlerName,
} from '../../../lambdas/core/synthesis-handlers.ts';
import { api, client } from '../api.ts';
import { formatValue } from '../format.ts';
import { Link, navigate } from '../router.tsx';
import { useSession } from '../session.ts';
import type { Activation, Configuration, Pipeline, Rollout, Run } from '../types.ts';
import { ConfirmDialog, ErrorNotice, Loading, Person, Time, useLoad, useTitle } from '../ui.tsx';
import { DeletePipeline, DeletionReceipt } from './delete-pipeline.tsx';
import { Executions } from './executions.tsx';
import { MetricsCharts } from './metrics-charts.tsx';
import { Monitors } from './monitors.tsx';
import { loadPipelineState, RolloutSummary } from './pipeline-state.tsx';
import { LoadMore, PagedItems, type PagedList, usePagedList } from './pipelines.tsx';
import { rolloutOutcomeWords } from './run-outcome.tsx';
import { Signals } from './signals.tsx';

export const getPipeline = (pipelineId: string) =>
  api(client.GET('/pipelines/{pipelineId}', { params: { path: { pipelineId } } }));

export const getConfiguration = (pipelineId: string, configurationId: string) =>
  api(
    client.GET('/pipelines/{pipelineId}/configurations/{configurationId}', {
      params: { path: { pipelineId, configurationId } },
    }),
  );

export function PipelinePage({ pipelineId }: { pipelineId: string }) {
  const { role } = useSession();
  const [deletion, setDeletion] = useState<Parameters<typeof DeletionReceipt>[0]['first']>();
  const loaded = useLoad(async () => {
    const pipeline = await getPipeline(pipelineId);
    const [active, state] = await Promise.all([
      getConfiguration(pipelineId, pipeline.activeConfigurationId),
      loadPipelineState(pipeline),
    ]);
    return { pipeline, active, state };
  }, [pipelineId]);
  const path = { pipelineId };
  const runs = usePagedList(
    (query) => api(client.GET('/pipelines/{pipelineId}/synthesis-runs', { params: { path, query } })),
    `runs of ${pipelineId}`,
  );
  const history = usePagedList(
    (query) => api(client.GET('/pipelines/{pipelineId}/activations', { params: { path, query } })),
    `activations of ${pipelineId}`,
  );
  useTitle(loaded.data?.pipeline.name ?? 'Pipeline');

  if (deletion) {
    return (
      <>
        <Breadcrumbs />
        <h1>Pipeline deleted</h1>
        <DeletionReceipt first={deletion} />
      </>
    );
  }
  if (!loaded.data) {
    return (
      <>
        <Breadcrumbs />
        {loaded.error ? <ErrorNotice error={loaded.error} /> : <Loading what="the pipeline" />}
      </>
    );
  }
  const { pipeline, active, state } = loaded.data;
  const reloadAll = () => {
    loaded.reload();
    history.reload();
  };
  return (
    <>
      <Breadcrumbs />
      <h1>{pipeline.name}</h1>
      <p class="muted small">
        <code>{pipeline.id}</code> · created <Time iso={pipeline.createdAt} />
      </p>
      <RolloutSummary state={state} onChanged={reloadAll} />
      <Synthesize pipelineId={pipeline.id} />
      <section aria-labelledby="active-configuration">
        <h2 id="active-configuration">
          Active configuration: version {active.version}
          {state.rollout ? ` (the base of the rollout, ${100 - state.rollout.percent} % of traffic)` : ''}
        </h2>
        <ConfigurationView configuration={active} />
      </section>
      <MetricsCharts pipelineId={pipeline.id} active={active} />
      <section aria-labelledby="runs">
        <h2 id="runs">Synthesis runs</h2>
        <ErrorNotice error={runs.error} />
        <PagedItems list={runs} empty="No synthesis runs yet." what="runs">
          {(items) => <RunTable runs={items} rollout={state.rollout ?? state.lastRollout} />}
        </PagedItems>
      </section>
      <Executions pipelineId={pipeline.id} />
      <Monitors pipelineId={pipeline.id} />
      <Signals pipelineId={pipeline.id} />
      <History
        pipeline={pipeline}
        active={active}
        history={history}
        rolloutRunning={state.rollout !== null}
        lastRollout={state.lastRollout}
        onActivated={reloadAll}
      />
      {role === 'admin' ? (
        <DeletePipeline pipeline={pipeline} rolloutRunning={state.rollout !== null} onDeleted={setDeletion} />
      ) : null}
    </>
  );
}

function Breadcrumbs() {
  return (
    <nav aria-label="Breadcrumbs" class="breadcrumbs">
      <Link to="">Pipelines</Link>
    </nav>
  );
}

function Synthesize({ pipelineId }: { pipelineId: string }) {
  const { canWrite } = useSession();
  const [handler, setHandler] = useState<SynthesisHandlerName | ''>('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const start = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      // One key per press: a retried or doubled request answers the same run instead of a second one.
      const run = await api(
        client.POST('/pipelines/{pipelineId}/synthesize', {
          params: { path: { pipelineId }, header: { 'Idempotency-Key': crypto.randomUUID() } },
          body: handler ? { synthesisHandler: handler } : {},
        }),
      );
      navigate(`runs/${encodeURIComponent(run.id)}`);
    } catch (caught) {
      setError(caught);
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="synthesize" class="card">
      <h2 id="synthesize">Propose a new configuration</h2>
      <form class="inline-form" method="post" onSubmit={start}>
        <label for="synthesis-handler">Handler</label>
        <select
          id="synthesis-handler"
          value={handler}
          onChange={(event) => setHandler(event.currentTarget.value as SynthesisHandlerName | '')}
        >
          <option value="">Server default</option>
          {SYNTHESIS_HANDLER_NAMES.map((name) => (
            <option key={name} value={name}>
              {name}
            </option>
          ))}
        </select>
        <button type="submit" class="primary" disabled={busy || !canWrite}>
          Synthesize
        </button>
      </form>
      {canWrite ? null : <p class="muted small">Viewers can read runs but not start them.</p>}
      {canWrite ? (
        <p>
          Or <Link to={`pipelines/${pipelineId}/change`}>change a slot by hand</Link>: edit a prompt or a
          setting yourself and propose it.
        </p>
      ) : null}
      <ErrorNotice error={error} />
    </section>
  );
}

/** A configuration's slots, each with its settings. */
export function ConfigurationView({ configuration }: { configuration: Configuration }) {
  return (
    <>
      <p class="muted small">
        {configuration.source === 'synthesis' ? 'Made by a synthesis run' : 'Written by hand'} · created{' '}
        <Time iso={configuration.createdAt} /> · <code>{configuration.id}</code>
      </p>
      <ul class="slots" aria-label={`Slots of version ${configuration.version}`}>
        {configuration.slots.map((slot) => (
          <li key={slot.id} class="card slot">
            <h3>
              {slot.name} <span class="tag">{slot.kind}</span> <code class="small">{slot.id}</code>
            </h3>
            <table class="settings">
              <caption class="visually-hidden">Settings of {slot.name}</caption>
              <tbody>
                {Object.entries(slot.settings).map(([key, value]) => (
                  <tr key={key}>
                    <th scope="row">{key}</th>
                    <td>
                      <pre class="value">{formatValue(value)}</pre>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </li>
        ))}
      </ul>
    </>
  );
}

/** Runs with their status; the run of the pipeline's latest rollout says how that rollout stands. */
export function RunTable({ runs, rollout }: { runs: Run[]; rollout?: Rollout | null }) {
  return (
    <div class="table-scroll">
      <table class="list cards-on-phone">
        <thead>
          <tr>
            <th scope="col">Started</th>
            <th scope="col">Status</th>
            <th scope="col">Handler</th>
            <th scope="col">Confidence</th>
          </tr>
        </thead>
        <tbody>
          {runs.map((run) => (
            <tr key={run.id}>
              <td data-label="Started">
                <Link to={`runs/${encodeURIComponent(run.id)}`} aria-label={`Run ${run.id}`}>
                  <Time iso={run.createdAt} />
                </Link>
              </td>
              <td data-label="Status">
                <span class={`status status-${run.status}`}>{run.status}</span>
                {rollout && run.id === rollout.synthesisRunId ? (
                  <span class="small"> · {rolloutOutcomeWords(rollout)}</span>
                ) : null}
              </td>
              <td data-label="Handler">{run.synthesisHandler}</td>
              <td data-label="Confidence">{run.confidence ?? '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

interface ActivationTarget {
  id: string;
  version: number;
}

/** Configurations the history names, other than the active one: where one can go back (or forward) to. */
function activationTargets(history: Activation[], activeId: string): ActivationTarget[] {
  const versions = new Map<string, number>();
  for (const activation of history) {
    versions.set(activation.previousConfigurationId, activation.previousVersion);
    versions.set(activation.configurationId, activation.version);
  }
  versions.delete(activeId);
  return [...versions].map(([id, version]) => ({ id, version })).sort((a, b) => b.version - a.version);
}

function History(props: {
  pipeline: Pipeline;
  active: Configuration;
  history: PagedList<Activation>;
  rolloutRunning: boolean;
  lastRollout: (Rollout & { candidateVersion: number }) | null;
  onActivated: () => void;
}) {
  const { canWrite } = useSession();
  const [target, setTarget] = useState<ActivationTarget>();
  const [reason, setReason] = useState('');
  const [error, setError] = useState<unknown>();
  const targets = activationTargets(props.history.items, props.active.id);

  const activate = async () => {
    if (!target) return;
    setError(undefined);
    try {
      await api(
        client.POST('/pipelines/{pipelineId}/configurations/{configurationId}/activate', {
          params: { path: { pipelineId: props.pipeline.id, configurationId: target.id } },
          body: reason.trim() ? { reason: reason.trim() } : {},
        }),
      );
      setTarget(undefined);
      setReason('');
      props.onActivated();
    } catch (caught) {
      setTarget(undefined);
      setError(caught);
    }
  };

  return (
    <section aria-labelledby="history">
      <h2 id="history">Configuration history</h2>
      <ErrorNotice error={props.history.error ?? error} />
      {props.history.items.length === 0 && !props.history.loading ? (
        <p class="muted">
          Version {props.active.version} has been active since the pipeline was created
          {props.rolloutRunning ? '; a rollout of a candidate is running beside it (above)' : ''}
          {props.lastRollout?.status === 'rolled_back'
            ? `; the rollout of version ${props.lastRollout.candidateVersion} was rolled back (above)`
            : ''}
          .
        </p>
      ) : null}
      <ol class="history" aria-label="Activations, newest first">
        {props.history.items.map((activation) => (
          <ActivationItem key={activation.id} activation={activation} />
        ))}
      </ol>
      <LoadMore list={props.history} what="history" />
      {targets.length > 0 ? (
        <div class="actions">
          {targets.map((option) => (
            <button key={option.id} type="button" disabled={!canWrite} onClick={() => setTarget(option)}>
              {option.version < props.active.version ? 'Roll back' : 'Go forward'} to version {option.version}
            </button>
          ))}
        </div>
      ) : null}
      {target ? (
        <ConfirmDialog
          title={`Make version ${target.version} the active configuration?`}
          confirmLabel={`Activate version ${target.version}`}
          onConfirm={() => void activate()}
          onCancel={() => setTarget(undefined)}
        >
          <p>
            Version {props.active.version} stops being active at once; every execution from now on uses
            version {target.version}. The change is recorded in the history.
          </p>
          <label for="activate-reason">Reason</label>
          <textarea
            id="activate-reason"
            rows={2}
            value={reason}
            onInput={(event) => setReason(event.currentTarget.value)}
          />
        </ConfirmDialog>
      ) : null}
    </section>
  );
}

/** What moved the configuration: an approval, a rollout's promotion, or activating a version by hand. */
export function activationKind(
  activation: Pick<Activation, 'source' | 'version' | 'previousVersion'>,
): string {
  if (activation.source === 'approval') return 'approval';
  if (activation.source === 'rollout') return 'promotion of a rollout';
  return activation.version < activation.previousVersion ? 'roll back' : 'activated by hand';
}

function ActivationItem({ activation }: { activation: Activation }) {
  return (
    <li>
      <p>
        <strong>{activation.summary}</strong>
      </p>
      <p class="muted small">
        <Time iso={activation.activatedAt} /> · {activationKind(activation)} by{' '}
        <Person name={activation.activatedByName} id={activation.activatedBy} />
        {activation.synthesisRunId ? (
          <>
            {' '}
            · <Link to={`runs/${encodeURIComponent(activation.synthesisRunId)}`}>the run</Link>
          </>
        ) : null}
      </p>
      {activation.reason ? <p class="small">Reason: {activation.reason}</p> : null}
    </li>
  );
}
