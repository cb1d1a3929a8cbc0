/**
 * Closing the loop on a run (roll out, measure): a rebase's conflicts in words, and the rollout panel
 * (arms, live counts, progress against the guardrail, the candidate's diff, promote and roll back
 * with a reason after a confirmation); the approve form is in approve-form.tsx, the effect in effect.tsx.
 */
import { useState } from 'preact/hooks';
import { ApiError, api, client } from '../api.ts';
import { formatValue } from '../format.ts';
import type { Effect, Rollout, Run } from '../types.ts';
import { ErrorNotice, Loading, Person, Time, useLoad } from '../ui.tsx';
import { ArmProgress, CandidateDiff, EndRolloutControls } from './rollout-progress.tsx';

export interface RebaseConflict {
  slotId: string;
  key: string;
  base: unknown;
  active: unknown;
  proposed: unknown;
}

/** The conflicts a 409 of a rebase carries, or none. */
export function conflictsOf(error: unknown): RebaseConflict[] {
  if (!(error instanceof ApiError) || error.status !== 409) return [];
  const details = error.details as { conflicts?: RebaseConflict[] } | undefined;
  return Array.isArray(details?.conflicts) ? details.conflicts : [];
}

export function RebaseConflicts({ conflicts }: { conflicts: RebaseConflict[] }) {
  return (
    <div class="notice notice-warning" role="alert" aria-label="Rebase conflicts">
      <h3>These changes cannot be applied on top of the active configuration</h3>
      <ul>
        {conflicts.map((conflict) => (
          <li key={`${conflict.slotId}.${conflict.key}`}>
            In slot <code>{conflict.slotId}</code>, <code>{conflict.key}</code> was{' '}
            <strong>{formatValue(conflict.base)}</strong> when this run was made, is{' '}
            <strong>{conflict.active === null ? 'gone' : formatValue(conflict.active)}</strong> now, and this
            run would set it to <strong>{formatValue(conflict.proposed)}</strong>.
          </li>
        ))}
      </ul>
      <p>
        <strong>What now:</strong> leave out the changes that touch these settings, or start a new synthesis
        run on the active configuration.
      </p>
    </div>
  );
}

export const percentText = (rate: number | null | undefined) =>
  rate === null || rate === undefined ? 'n/a' : `${(rate * 100).toFixed(1)} %`;

/** An arm's share of traffic: the split while the rollout runs, all or none once it ended. */
function traffic(rollout: Rollout, arm: 'base' | 'candidate'): string {
  if (rollout.status === 'active')
    return `${arm === 'candidate' ? rollout.percent : 100 - rollout.percent} %`;
  const kept = rollout.status === 'promoted' ? 'candidate' : 'base';
  return arm === kept
    ? '100 % (now)'
    : `0 % (was ${arm === 'candidate' ? rollout.percent : 100 - rollout.percent} %)`;
}

/** The pipeline's rollout: arms, live counts, progress, the candidate's diff, promote and roll back. */
export function RolloutPanel({ run, onEnded }: { run: Run; onEnded?: () => void }) {
  const [version, setVersion] = useState(0);
  const params = { path: { pipelineId: run.pipelineId } };
  const rollout = useLoad(
    () => api(client.GET('/pipelines/{pipelineId}/rollout', { params })),
    [run.id, version],
  );
  const effect = useLoad(
    () => api(client.GET('/synthesis-runs/{id}/effect', { params: { path: { id: run.id } } })),
    [run.id, version],
  );
  if (!rollout.data)
    return rollout.error ? <ErrorNotice error={rollout.error} /> : <Loading what="the rollout" />;
  const current = rollout.data;
  if (current.synthesisRunId !== run.id) return null;
  const arms = effect.data?.arms;
  return (
    <section aria-labelledby="rollout" class="card rollout">
      <h2 id="rollout">Rollout</h2>
      <p>
        Status: <output aria-label="Rollout status">{current.status.replace('_', ' ')}</output>
        {current.endedAt ? (
          <>
            {' '}
            · ended <Time iso={current.endedAt} /> by{' '}
            <Person name={current.endedByName} id={current.endedBy} />
          </>
        ) : null}
      </p>
      {current.endReason ? <p class="muted">{current.endReason}</p> : null}
      <ArmsTable rollout={current} arms={arms} />
      {current.status === 'active' ? <ArmProgress rollout={current} arms={arms} /> : null}
      <p class="muted small">
        {current.autoRollback
          ? 'Rolled back automatically once a guarded metric is shown worse'
          : 'Never rolled back automatically'}
        ;{' '}
        {current.autoPromote
          ? `promoted automatically once every guarded metric is shown within its threshold, with ${current.minExecutions} candidate executions at the last step`
          : 'promoted only by hand'}
        .
      </p>
      <CandidateDiff rollout={current} />
      <EndRolloutControls
        rollout={current}
        candidateExecutions={arms?.applied.executions}
        onEnded={() => {
          setVersion((n) => n + 1);
          onEnded?.();
        }}
      />
    </section>
  );
}

/** Both arms of a rollout: their share of traffic and live counts. */
function ArmsTable({ rollout, arms }: { rollout: Rollout; arms: Effect['arms'] | undefined }) {
  const current = rollout;
  return (
    <div class="table-scroll">
      <table class="arms">
        <thead>
          <tr>
            <th scope="col">Arm</th>
            <th scope="col">Traffic</th>
            <th scope="col">Executions</th>
            <th scope="col">Failed</th>
          </tr>
        </thead>
        <tbody>
          <tr>
            <th scope="row">Base</th>
            <td>{traffic(current, 'base')}</td>
            <td>{arms?.base.executions ?? '…'}</td>
            <td>{arms ? percentText(arms.base.failureRate) : '…'}</td>
          </tr>
          <tr>
            <th scope="row">Candidate</th>
            <td>{traffic(current, 'candidate')}</td>
            <td>{arms?.applied.executions ?? '…'}</td>
            <td>{arms ? percentText(arms.applied.failureRate) : '…'}</td>
          </tr>
        </tbody>
      </table>
    </div>
  );
}
