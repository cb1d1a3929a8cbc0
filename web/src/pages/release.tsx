/**
 * Closing the loop on a run (approve, roll out, measure): the approve form (a checkbox per change, rebase, a
 * rollout's percent and guardrails), a rebase's conflicts in words, the rollout panel (arms, live
 * counts, promote, roll back) and the measured effect with a small chart readable at 375 px.
 */
import { useState } from 'preact/hooks';
import { ApiError, api, client } from '../api.ts';
import { formatValue } from '../format.ts';
import { useSession } from '../session.ts';
import type { Effect, Run } from '../types.ts';
import { ErrorNotice, Loading, Time, useLoad } from '../ui.tsx';

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

const percentText = (rate: number | null | undefined) =>
  rate === null || rate === undefined ? 'n/a' : `${(rate * 100).toFixed(1)} %`;

/** The pipeline's rollout: arms, live counts, promote and roll back. */
export function RolloutPanel({ run }: { run: Run }) {
  const { canWrite } = useSession();
  const [version, setVersion] = useState(0);
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
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
            · ended <Time iso={current.endedAt} /> by <code>{current.endedBy}</code>
          </>
        ) : null}
      </p>
      {current.endReason ? <p class="muted">{current.endReason}</p> : null}
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
            <th scope="row">Active (base)</th>
            <td>{100 - current.percent} %</td>
            <td>{arms?.base.executions ?? '…'}</td>
            <td>{arms ? percentText(arms.base.failureRate) : '…'}</td>
          </tr>
          <tr>
            <th scope="row">Candidate</th>
            <td>{current.percent} %</td>
            <td>{arms?.applied.executions ?? '…'}</td>
            <td>{arms ? percentText(arms.applied.failureRate) : '…'}</td>
          </tr>
        </tbody>
      </table>
      <p class="muted small">
        Judged once each arm has {current.minExecutions} executions;{' '}
        {current.autoRollback ? 'rolled back automatically when worse' : 'never rolled back automatically'}
        {current.autoPromote ? ', promoted automatically when not worse' : ''}.
      </p>
      <ErrorNotice error={error} />
      {canWrite && current.status === 'active' ? (
        <div class="actions">
          <button type="button" class="primary" disabled={busy} onClick={() => void end('promote')}>
            Promote to all traffic
          </button>
          <button type="button" class="danger" disabled={busy} onClick={() => void end('rollback')}>
            Roll back
          </button>
        </div>
      ) : null}
    </section>
  );
}

/** An arm's failure rate with its 95 % (Wald) interval, for the chart. */
function armInterval(arm: Effect['arms']['base']): { rate: number; low: number; high: number } | null {
  if (arm.failureRate === null || arm.executions === 0) return null;
  const half = 1.96 * Math.sqrt((arm.failureRate * (1 - arm.failureRate)) / arm.executions);
  return {
    rate: arm.failureRate,
    low: Math.max(0, arm.failureRate - half),
    high: Math.min(1, arm.failureRate + half),
  };
}

const VERDICT_WORDS: Record<Effect['verdict'], string> = {
  improved: 'Improved: fewer executions fail with the applied configuration.',
  worse: 'Worse: more executions fail with the applied configuration.',
  no_significant_change: 'No significant change in the failure rate.',
  not_enough_data: 'Not enough data yet.',
};

/** The measured effect: verdict, a chart of both arms' failure rates with intervals, and the figures. */
export function EffectPanel({ run }: { run: Run }) {
  const effect = useLoad(
    () => api(client.GET('/synthesis-runs/{id}/effect', { params: { path: { id: run.id } } })),
    [run.id],
  );
  if (!effect.data)
    return effect.error ? <ErrorNotice error={effect.error} /> : <Loading what="the effect" />;
  const data = effect.data;
  const rows = [
    { name: 'Before (base)', arm: data.arms.base },
    { name: 'After (applied)', arm: data.arms.applied },
  ];
  const scale = Math.max(0.05, ...rows.map((row) => armInterval(row.arm)?.high ?? 0));
  const x = (rate: number) => 90 + (rate / scale) * 200;
  return (
    <section aria-labelledby="effect" class="card effect">
      <h2 id="effect">Effect</h2>
      <p>
        <output aria-label="Effect verdict">{VERDICT_WORDS[data.verdict]}</output>{' '}
        <span class="muted small">
          ({data.mode === 'rollout' ? 'rollout arms' : 'before and after the approval'}; at least{' '}
          {data.minExecutions} executions per arm)
        </span>
      </p>
      <svg
        class="effect-chart"
        viewBox="0 0 320 80"
        width="100%"
        role="img"
        aria-label={`Failure rate before ${percentText(data.arms.base.failureRate)}, after ${percentText(data.arms.applied.failureRate)}`}
      >
        {rows.map((row, index) => {
          const interval = armInterval(row.arm);
          const y = 22 + index * 32;
          return (
            <g key={row.name}>
              <text x="0" y={y + 4} font-size="11">
                {row.name}
              </text>
              {interval ? (
                <>
                  <line
                    x1={x(interval.low)}
                    x2={x(interval.high)}
                    y1={y}
                    y2={y}
                    stroke="currentColor"
                    stroke-width="2"
                  />
                  <circle cx={x(interval.rate)} cy={y} r="4" />
                  <text x={x(interval.high) + 4} y={y + 4} font-size="10">
                    {percentText(interval.rate)}
                  </text>
                </>
              ) : (
                <text x="90" y={y + 4} font-size="10">
                  no executions yet
                </text>
              )}
            </g>
          );
        })}
      </svg>
      <dl class="facts">
        <dt>Before</dt>
        <dd>
          {data.arms.base.failed} of {data.arms.base.executions} failed
        </dd>
        <dt>After</dt>
        <dd>
          {data.arms.applied.failed} of {data.arms.applied.executions} failed
        </dd>
        {data.failureRate ? (
          <>
            <dt>Difference</dt>
            <dd>
              {percentText(data.failureRate.difference)} (95 % interval{' '}
              {percentText(data.failureRate.ci95[0])} to {percentText(data.failureRate.ci95[1])}, p ={' '}
              {data.failureRate.pValue.toFixed(3)})
            </dd>
          </>
        ) : null}
      </dl>
    </section>
  );
}
