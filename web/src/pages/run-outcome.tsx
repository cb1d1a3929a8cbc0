/**
 * Where a run ended up beyond its status: an approved run's rollout outcome (rolling out, promoted,
 * rolled back) beside "approved", and a failed run's retry with the offline handler heuristic-v1.
 */
import { useState } from 'preact/hooks';
import { ApiError, api, client } from '../api.ts';
import { navigate } from '../router.tsx';
import { useSession } from '../session.ts';
import type { Rollout, Run } from '../types.ts';
import { ErrorNotice, useLoad } from '../ui.tsx';

/** A rollout's outcome in a few words: "rolling out to 10 %", "promoted", "rolled back". */
export function rolloutOutcomeWords(rollout: Pick<Rollout, 'status' | 'percent'>): string {
  if (rollout.status === 'active') return `rolling out to ${rollout.percent} %`;
  return rollout.status === 'promoted' ? 'rollout promoted' : 'rollout rolled back';
}

/** The pipeline's rollout when it is this run's (only the latest is answered), else null. */
export function useRunRollout(run: Run, version = 0) {
  return useLoad(
    async () =>
      run.rolloutId
        ? api(
            client.GET('/pipelines/{pipelineId}/rollout', {
              params: { path: { pipelineId: run.pipelineId } },
            }),
          ).catch((error: unknown) => {
            if (error instanceof ApiError && error.status === 404) return null;
            throw error;
          })
        : null,
    [run.id, run.status, run.rolloutId, version],
  );
}

/** " · rollout rolled back" beside an approved run's status, when its rollout is the pipeline's latest. */
export function RolloutOutcome({ run, version }: { run: Run; version: number }) {
  const rollout = useRunRollout(run, version);
  const current = rollout.data;
  if (!current || current.id !== run.rolloutId) return null;
  return (
    <>
      {' · '}
      <output aria-label="Rollout outcome" class={`status status-rollout-${current.status}`}>
        {rolloutOutcomeWords(current)}
      </output>
    </>
  );
}

/** A failed run of a model handler: start the same synthesis again with heuristic-v1, which needs no key. */
export function RetryWithHeuristic({ run }: { run: Run }) {
  const { canWrite } = useSession();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  if (run.synthesisHandler === 'heuristic-v1' || !canWrite) return null;
  const retry = async () => {
    setBusy(true);
    setError(undefined);
    try {
      const started = await api(
        client.POST('/pipelines/{pipelineId}/synthesize', {
          params: {
            path: { pipelineId: run.pipelineId },
            header: { 'Idempotency-Key': crypto.randomUUID() },
          },
          body: { synthesisHandler: 'heuristic-v1' },
        }),
      );
      navigate(`runs/${encodeURIComponent(started.id)}`);
    } catch (caught) {
      setError(caught);
      setBusy(false);
    }
  };
  return (
    <>
      <p>
        heuristic-v1 reads the same signals and executions offline, without a model or a key, and proposes
        what its rules can tell.
      </p>
      <div class="actions">
        <button type="button" disabled={busy} onClick={() => void retry()}>
          Retry with heuristic-v1
        </button>
      </div>
      <ErrorNotice error={error} />
    </>
  );
}
