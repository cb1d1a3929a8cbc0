/**
 * Closing the loop on a run (approve, roll out, measure): the approve form (a checkbox per change, rebase, a
 * rollout's percent and guardrails), a rebase's conflicts in words, and the rollout panel (arms, live
 * counts, promote and roll back after a confirmation); the measured effect is in effect.tsx.
 */
import { useState } from 'preact/hooks';
import { ApiError, api, client } from '../api.ts';
import { formatValue } from '../format.ts';
import { useSession } from '../session.ts';
import type { Effect, Rollout, Run } from '../types.ts';
import { ConfirmDialog, ErrorNotice, Loading, Person, Time, useLoad } from '../ui.tsx';

/** What the approve form sends. */
export interface ApproveChoice {
  changeIds?: string[];
  rebase?: boolean;
  rollout?: { percent: number; autoPromote?: boolean };
}

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

/** The choices of an approval: which changes, rebase, and a rollout with its guardrails. */
export function ApproveOptions(props: { run: Run; onChange: (choice: ApproveChoice) => void }) {
  const [chosen, setChosen] = useState<Set<string>>(new Set(props.run.changes.map((change) => change.id)));
  const [rebase, setRebase] = useState(false);
  const [percent, setPercent] = useState('');
  const [autoPromote, setAutoPromote] = useState(false);
  const emit = (next: {
    chosen?: Set<string>;
    rebase?: boolean;
    percent?: string;
    autoPromote?: boolean;
  }) => {
    const c = next.chosen ?? chosen;
    const r = next.rebase ?? rebase;
    const p = next.percent ?? percent;
    const a = next.autoPromote ?? autoPromote;
    const all = c.size === props.run.changes.length;
    props.onChange({
      ...(all
        ? {}
        : { changeIds: props.run.changes.filter((change) => c.has(change.id)).map((change) => change.id) }),
      ...(r ? { rebase: true } : {}),
      ...(p.trim() !== '' ? { rollout: { percent: Number(p), ...(a ? { autoPromote: true } : {}) } } : {}),
    });
  };
  return (
    <fieldset class="approve-options">
      <legend>What to approve</legend>
      {props.run.changes.map((change) => (
        <label key={change.id} class="check">
          <input
            type="checkbox"
            name="change"
            checked={chosen.has(change.id)}
            onChange={(event) => {
              const next = new Set(chosen);
              if (event.currentTarget.checked) next.add(change.id);
              else next.delete(change.id);
              setChosen(next);
              emit({ chosen: next });
            }}
          />{' '}
          Change {change.id} ({change.slotId}): {change.description}
        </label>
      ))}
      <label class="check">
        <input
          type="checkbox"
          checked={rebase}
          onChange={(event) => {
            setRebase(event.currentTarget.checked);
            emit({ rebase: event.currentTarget.checked });
          }}
        />{' '}
        Rebase onto the configuration active now, if it moved
      </label>
      <label for="rollout-percent">
        Roll out to a share of traffic first (1–99 %, empty: all traffic at once)
      </label>
      <input
        id="rollout-percent"
        type="number"
        min={1}
        max={99}
        inputMode="numeric"
        value={percent}
        onInput={(event) => {
          setPercent(event.currentTarget.value);
          emit({ percent: event.currentTarget.value });
        }}
      />
      <label class="check">
        <input
          type="checkbox"
          checked={autoPromote}
          disabled={percent.trim() === ''}
          onChange={(event) => {
            setAutoPromote(event.currentTarget.checked);
            emit({ autoPromote: event.currentTarget.checked });
          }}
        />{' '}
        Promote automatically when it is not worse (it is rolled back automatically when worse)
      </label>
      {chosen.size === 0 ? <p class="muted">Choose at least one change to approve.</p> : null}
    </fieldset>
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

/** The pipeline's rollout: arms, live counts, promote and roll back. */
export function RolloutPanel({ run }: { run: Run }) {
  const { canWrite } = useSession();
  const [version, setVersion] = useState(0);
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const [asking, setAsking] = useState<'promote' | 'rollback'>();
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
  const end = async (action: 'promote' | 'rollback') => {
    setBusy(true);
    setError(undefined);
    try {
      await api(
        action === 'promote'
          ? client.POST('/pipelines/{pipelineId}/rollout/promote', { params, body: {} })
          : client.POST('/pipelines/{pipelineId}/rollout/rollback', { params, body: {} }),
      );
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
      setVersion((n) => n + 1);
    }
  };
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
      <p class="muted small">
        Judged once each arm has {current.minExecutions} executions;{' '}
        {current.autoRollback ? 'rolled back automatically when worse' : 'never rolled back automatically'}
        {current.autoPromote ? ', promoted automatically when not worse' : ''}.
      </p>
      <ErrorNotice error={error} />
      {canWrite && current.status === 'active' ? (
        <div class="actions">
          <button type="button" class="primary" disabled={busy} onClick={() => setAsking('promote')}>
            Promote to all traffic…
          </button>
          <button type="button" class="danger" disabled={busy} onClick={() => setAsking('rollback')}>
            Roll back…
          </button>
        </div>
      ) : null}
      {asking ? (
        <EndRolloutDialog
          action={asking}
          onConfirm={() => {
            setAsking(undefined);
            void end(asking);
          }}
          onCancel={() => setAsking(undefined)}
        />
      ) : null}
    </section>
  );
}

/** Promote and roll back cannot be undone: each asks first, saying what happens to the traffic. */
function EndRolloutDialog(props: {
  action: 'promote' | 'rollback';
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const promote = props.action === 'promote';
  return (
    <ConfirmDialog
      title={promote ? 'Promote the candidate to all traffic?' : 'Roll the rollout back?'}
      confirmLabel={promote ? 'Promote' : 'Roll back'}
      danger={!promote}
      onConfirm={props.onConfirm}
      onCancel={props.onCancel}
    >
      <p>
        {promote
          ? 'The candidate becomes the active configuration for every routing key, and the rollout ends. This cannot be undone; a later activation can bring the base back.'
          : 'Every routing key gets the base configuration again, and the rollout ends. This cannot be undone.'}
      </p>
    </ConfirmDialog>
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
