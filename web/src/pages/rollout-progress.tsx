/**
 * A running rollout's progress and its end, shared by the pipeline page and the run's rollout panel:
 * executions so far per arm against the minimum a promotion needs, the candidate's diff against the base,
 * and Promote / Roll back with a reason (Promote on no measured execution warns first).
 */
import { useState } from 'preact/hooks';
import { api, client } from '../api.ts';
import { formatCount } from '../format.ts';
import { useSession } from '../session.ts';
import type { Effect, Rollout } from '../types.ts';
import { ConfirmDialog, ErrorNotice, Loading, useLoad } from '../ui.tsx';
import { SettingsDiff } from './settings-diff.tsx';

const getConfiguration = (pipelineId: string, configurationId: string) =>
  api(
    client.GET('/pipelines/{pipelineId}/configurations/{configurationId}', {
      params: { path: { pipelineId, configurationId } },
    }),
  );

/** Each arm's executions measured so far against the rollout's minimum before a promotion or a step up. */
export function ArmProgress({ rollout, arms }: { rollout: Rollout; arms: Effect['arms'] | undefined }) {
  const rows = [
    { name: 'Base', executions: arms?.base.executions },
    { name: 'Candidate', executions: arms?.applied.executions },
  ];
  return (
    <ul class="arm-progress" aria-label="Executions so far per arm">
      {rows.map((row) => (
        <li key={row.name}>
          <strong>{row.name}</strong>:{' '}
          {row.executions === undefined
            ? 'reading…'
            : `${formatCount(row.executions)} of the ${formatCount(rollout.minExecutions)} executions a promotion needs`}
          {row.executions === undefined ? null : (
            <progress
              max={rollout.minExecutions}
              value={Math.min(row.executions, rollout.minExecutions)}
              aria-label={`${row.name}: executions so far against the ${rollout.minExecutions} needed`}
            />
          )}
        </li>
      ))}
    </ul>
  );
}

/** What the candidate changes against the base, slot by slot (only the slots that differ). */
export function CandidateDiff({ rollout }: { rollout: Rollout }) {
  const configurations = useLoad(
    () =>
      Promise.all([
        getConfiguration(rollout.pipelineId, rollout.baseConfigurationId),
        getConfiguration(rollout.pipelineId, rollout.candidateConfigurationId),
      ]),
    [rollout.id],
  );
  if (!configurations.data)
    return configurations.error ? (
      <ErrorNotice error={configurations.error} />
    ) : (
      <Loading what="the candidate's changes" />
    );
  const [base, candidate] = configurations.data;
  const changed = candidate.slots.filter((slot) => {
    const before = base.slots.find((other) => other.id === slot.id);
    return JSON.stringify(before?.settings) !== JSON.stringify(slot.settings);
  });
  return (
    <details class="candidate-diff">
      <summary>
        What the candidate (version {candidate.version}) changes against the base (version {base.version}):{' '}
        {changed.length} slot{changed.length === 1 ? '' : 's'}
      </summary>
      {changed.map((slot) => (
        <SettingsDiff
          key={slot.id}
          slotName={slot.name}
          before={base.slots.find((other) => other.id === slot.id)?.settings}
          after={slot.settings}
          baseVersion={base.version}
          proposedVersion={candidate.version}
        />
      ))}
    </details>
  );
}

/** Promote and Roll back, each confirmed with a reason kept with the rollout; answers the ended rollout. */
export function EndRolloutControls(props: {
  rollout: Rollout;
  /** The candidate's executions measured so far (undefined while unknown). */
  candidateExecutions: number | undefined;
  onEnded: () => void;
}) {
  const { canWrite } = useSession();
  const [asking, setAsking] = useState<'promote' | 'rollback'>();
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  if (!canWrite || props.rollout.status !== 'active') return null;
  const params = { path: { pipelineId: props.rollout.pipelineId } };
  const end = async (action: 'promote' | 'rollback') => {
    setBusy(true);
    setError(undefined);
    const body = reason.trim() ? { reason: reason.trim() } : {};
    try {
      await api(
        action === 'promote'
          ? client.POST('/pipelines/{pipelineId}/rollout/promote', { params, body })
          : client.POST('/pipelines/{pipelineId}/rollout/rollback', { params, body }),
      );
      setReason('');
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
      props.onEnded();
    }
  };
  const promote = asking === 'promote';
  const unmeasured = promote && (props.candidateExecutions ?? 0) === 0;
  return (
    <>
      <ErrorNotice error={error} />
      <div class="actions">
        <button type="button" class="primary" disabled={busy} onClick={() => setAsking('promote')}>
          Promote to all traffic…
        </button>
        <button type="button" class="danger" disabled={busy} onClick={() => setAsking('rollback')}>
          Roll back…
        </button>
      </div>
      {asking ? (
        <ConfirmDialog
          title={promote ? 'Promote the candidate to all traffic?' : 'Roll the rollout back?'}
          confirmLabel={promote ? (unmeasured ? 'Promote anyway' : 'Promote') : 'Roll back'}
          danger={!promote || unmeasured}
          onConfirm={() => {
            setAsking(undefined);
            void end(asking);
          }}
          onCancel={() => setAsking(undefined)}
        >
          {unmeasured ? (
            <div class="notice notice-warning" role="alert">
              <p>
                <strong>No execution of the candidate has been measured yet.</strong> Promoting now ships it
                to every routing key on no evidence at all; the guardrail promotes only once{' '}
                {props.rollout.minExecutions} executions show it within its threshold.
              </p>
            </div>
          ) : null}
          <p>
            {promote
              ? 'The candidate becomes the active configuration for every routing key, and the rollout ends. This cannot be undone; a later activation can bring the base back.'
              : 'Every routing key gets the base configuration again, and the rollout ends. This cannot be undone.'}
          </p>
          <label for="end-rollout-reason">Reason (optional, kept with the rollout)</label>
          <textarea
            id="end-rollout-reason"
            rows={2}
            value={reason}
            onInput={(event) => setReason(event.currentTarget.value)}
          />
        </ConfirmDialog>
      ) : null}
    </>
  );
}
