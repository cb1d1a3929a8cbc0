/**
 * Where a pipeline stands, for the pipelines list and the pipeline page: its active version, the
 * rollout running on it (its candidate version, percent, arms and progress, promote and roll back)
 * or how the last one ended, and the runs awaiting review.
 */
import { ApiError, api, client } from '../api.ts';
import { Link } from '../router.tsx';
import type { Pipeline, Rollout } from '../types.ts';
import { Person, Time, useLoad } from '../ui.tsx';
import { ArmProgress, CandidateDiff, EndRolloutControls } from './rollout-progress.tsx';

export interface PipelineState {
  activeVersion: number;
  /** The running rollout, with its candidate's version; null when none runs. */
  rollout: (Rollout & { candidateVersion: number }) | null;
  /** The last rollout when it ended (promoted or rolled back), with its candidate's version; else null. */
  lastRollout: (Rollout & { candidateVersion: number }) | null;
  /** Whether a generated run awaits a decision (the newest such run's id). */
  awaitingReview: string | null;
}

const configurationVersion = async (pipelineId: string, configurationId: string) =>
  (
    await api(
      client.GET('/pipelines/{pipelineId}/configurations/{configurationId}', {
        params: { path: { pipelineId, configurationId } },
      }),
    )
  ).version;

/** Three reads, in parallel: the active configuration, the rollout, the newest generated run. */
export async function loadPipelineState(pipeline: Pipeline): Promise<PipelineState> {
  const path = { pipelineId: pipeline.id };
  const [activeVersion, rollout, waiting] = await Promise.all([
    configurationVersion(pipeline.id, pipeline.activeConfigurationId),
    api(client.GET('/pipelines/{pipelineId}/rollout', { params: { path } })).catch((error: unknown) => {
      if (error instanceof ApiError && error.status === 404) return null;
      throw error;
    }),
    api(
      client.GET('/pipelines/{pipelineId}/synthesis-runs', {
        params: { path, query: { status: 'generated', limit: 1 } },
      }),
    ),
  ]);
  const withVersion = rollout
    ? {
        ...rollout,
        candidateVersion: await configurationVersion(pipeline.id, rollout.candidateConfigurationId),
      }
    : null;
  const running = withVersion?.status === 'active';
  return {
    activeVersion,
    rollout: running ? withVersion : null,
    lastRollout: running ? null : withVersion,
    awaitingReview: waiting.items[0]?.id ?? null,
  };
}

/** One line for the pipelines list: active version, a running rollout, "needs review". */
export function PipelineStateLine({ pipeline }: { pipeline: Pipeline }) {
  const state = useLoad(() => loadPipelineState(pipeline), [pipeline.id]);
  if (!state.data)
    return <p class="muted small">{state.error ? 'State unavailable' : 'Reading its state…'}</p>;
  const { activeVersion, rollout, awaitingReview } = state.data;
  return (
    <p class="pipeline-state small">
      <span>Active: version {activeVersion}</span>
      {rollout ? (
        <span class="badge badge-rollout">
          Rollout: version {rollout.candidateVersion} on {rollout.percent} %
        </span>
      ) : null}
      {awaitingReview ? (
        <Link to={`runs/${encodeURIComponent(awaitingReview)}`} class="badge badge-review">
          Needs review
        </Link>
      ) : null}
    </p>
  );
}

/** How the last rollout ended, for the pipeline page when none runs: its candidate, outcome, when and why. */
function LastRollout({ rollout }: { rollout: Rollout & { candidateVersion: number } }) {
  return (
    <section aria-labelledby="last-rollout" class="card rollout-summary">
      <h2 id="last-rollout">
        Last rollout: version {rollout.candidateVersion}{' '}
        {rollout.status === 'promoted' ? 'promoted' : 'rolled back'}
      </h2>
      <p>
        Ended <Time iso={rollout.endedAt} /> by <Person name={rollout.endedByName} id={rollout.endedBy} />
        {rollout.endReason ? `: ${rollout.endReason}` : ''}
      </p>
      <p class="muted small">
        It served version {rollout.candidateVersion} to {rollout.percent} % of traffic ·{' '}
        <Link to={`runs/${encodeURIComponent(rollout.synthesisRunId)}`}>its run</Link>
      </p>
    </section>
  );
}

/** The pipeline page's account of a rollout: a running one's arms, progress, diff and end; else the last one's outcome. */
export function RolloutSummary({ state, onChanged }: { state: PipelineState; onChanged: () => void }) {
  const { rollout, activeVersion } = state;
  const effect = useLoad(
    async () =>
      rollout
        ? api(client.GET('/synthesis-runs/{id}/effect', { params: { path: { id: rollout.synthesisRunId } } }))
        : undefined,
    [rollout?.id],
  );
  if (!rollout) return state.lastRollout ? <LastRollout rollout={state.lastRollout} /> : null;
  return (
    <section aria-labelledby="pipeline-rollout" class="card rollout-summary">
      <h2 id="pipeline-rollout">
        Rollout in progress: version {rollout.candidateVersion} on {rollout.percent} % of traffic
      </h2>
      <ul class="arms-summary">
        <li>
          <strong>Candidate</strong>: version {rollout.candidateVersion}, {rollout.percent} % of routing keys
        </li>
        <li>
          <strong>Base</strong> (the active configuration): version {activeVersion}, {100 - rollout.percent} %
        </li>
      </ul>
      <ArmProgress rollout={rollout} arms={effect.data?.arms} />
      <CandidateDiff rollout={rollout} />
      <p class="muted small">
        Started <Time iso={rollout.startedAt} /> by{' '}
        <Person name={rollout.startedByName} id={rollout.startedBy} /> ·{' '}
        {rollout.autoPromote ? 'promotes itself' : 'promoted by hand'} after {rollout.minExecutions}{' '}
        executions per arm · <Link to={`runs/${encodeURIComponent(rollout.synthesisRunId)}`}>its run</Link>
      </p>
      <EndRolloutControls
        rollout={rollout}
        candidateExecutions={effect.data?.arms.applied.executions}
        onEnded={onChanged}
      />
    </section>
  );
}
