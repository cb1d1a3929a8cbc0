/**
 * The decision on a generated run: the approve form, the approval rules' gate, Reject beside its
 * reason; every decision confirmed in words first and sent with exactly the form's choices; a 409
 * told as what happened, and the form closed when the run was decided meanwhile.
 */
import { useMemo, useState } from 'preact/hooks';
import { ApiError, api, client } from '../api.ts';
import {
  type ApproveForm,
  type ApproveRequest,
  changesByNumber,
  checkApproveForm,
  DEFAULT_PERCENT,
  defaultChoice,
  describeApproval,
} from '../approval-choice.ts';
import { type ConflictExplanation, explainConflict } from '../conflict.ts';
import { useSession } from '../session.ts';
import type { Pipeline, Run } from '../types.ts';
import { ErrorNotice } from '../ui.tsx';
import { ApproveOptions, DecisionDialog } from './approve-form.tsx';
import { ApprovalGateNotice, useApprovalGate } from './evaluation.tsx';
import { getConfiguration, getPipeline } from './pipeline.tsx';
import { conflictsOf, type RebaseConflict, RebaseConflicts } from './release.tsx';

const getRun = (id: string) => api(client.GET('/synthesis-runs/{id}', { params: { path: { id } } }));

/** After a 409: reads where the run and the pipeline stand now, and says what happened. */
async function explainDecisionConflict(
  action: 'approve' | 'reject',
  known: { run: Run; pipeline: Pipeline | undefined; baseVersion: number | undefined; userId: string },
): Promise<{ explanation: ConflictExplanation; run: Run }> {
  const run = await getRun(known.run.id).catch(() => known.run);
  const pipeline = await getPipeline(run.pipelineId).catch(() => known.pipeline);
  const active = pipeline
    ? await getConfiguration(run.pipelineId, pipeline.activeConfigurationId).catch(() => undefined)
    : undefined;
  const explanation = explainConflict({
    action,
    run,
    userId: known.userId,
    activeConfigurationId: pipeline?.activeConfigurationId,
    activeVersion: active?.version,
    baseVersion: known.baseVersion,
  });
  return { explanation, run };
}

function ConflictNotice({ conflict }: { conflict: ConflictExplanation }) {
  return (
    <div class="notice notice-warning" role="alert">
      <h3>{conflict.title}</h3>
      <p>{conflict.detail}</p>
      <p>
        <strong>What now:</strong> {conflict.next}
      </p>
    </div>
  );
}

type Asking = { action: 'approve'; body: ApproveRequest } | { action: 'reject'; reason: string };

export function Decide(props: {
  run: Run;
  pipeline: Pipeline | undefined;
  baseVersion: number | undefined;
  onDecided: (run: Run) => void;
}) {
  const { run } = props;
  const { me, canWrite } = useSession();
  const initial = useMemo(() => defaultChoice(run), [run.id]);
  const [form, setForm] = useState<ApproveForm>({
    chosen: initial.chosen,
    rebase: false,
    rollout: false,
    percent: DEFAULT_PERCENT,
    minExecutions: '',
    autoPromote: false,
  });
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const [conflict, setConflict] = useState<ConflictExplanation>();
  // The run was decided meanwhile (a 409 said so): nothing here can be sent any more.
  const [closed, setClosed] = useState(false);
  const [asking, setAsking] = useState<Asking>();
  const [rebaseConflicts, setRebaseConflicts] = useState<RebaseConflict[]>([]);
  const checked = checkApproveForm(run, form);
  const chosenIds = changesByNumber(run)
    .map((change) => change.id)
    .filter((id) => form.chosen.has(id));
  const gate = useApprovalGate(run, chosenIds.length === run.changes.length ? undefined : chosenIds);

  const send = async (decision: Asking) => {
    setBusy(true);
    setError(undefined);
    setConflict(undefined);
    setRebaseConflicts([]);
    const params = { path: { id: run.id } };
    try {
      const decided = await api(
        decision.action === 'approve'
          ? client.POST('/synthesis-runs/{id}/approve', { params, body: decision.body })
          : client.POST('/synthesis-runs/{id}/reject', {
              params,
              body: decision.reason ? { reason: decision.reason } : {},
            }),
      );
      props.onDecided(decided);
    } catch (caught) {
      if (conflictsOf(caught).length > 0) {
        setRebaseConflicts(conflictsOf(caught));
      } else if (caught instanceof ApiError && caught.status === 409) {
        const now = await explainDecisionConflict(decision.action, { ...props, userId: me.user.id });
        setConflict(now.explanation);
        if (now.run.status !== 'generated') setClosed(true);
      } else {
        setError(caught);
      }
    } finally {
      setBusy(false);
    }
  };
  const approve = (override?: string) => {
    if (!checked.body) return;
    setAsking({
      action: 'approve',
      body: { ...checked.body, ...(override ? { override: { reason: override } } : {}) },
    });
  };
  const off = busy || closed;

  return (
    <section aria-labelledby="decide" class="card decide">
      <h2 id="decide">Decide</h2>
      {conflict ? <ConflictNotice conflict={conflict} /> : null}
      {rebaseConflicts.length > 0 ? <RebaseConflicts conflicts={rebaseConflicts} /> : null}
      <ErrorNotice error={error} />
      {!canWrite ? (
        <p class="muted">Viewers can read proposals but not decide on them.</p>
      ) : (
        <fieldset class="decide-fields" disabled={closed}>
          <legend class="visually-hidden">Your decision</legend>
          {run.changes.length === 0 ? null : (
            <div class="decide-approve">
              <h3>Approve</h3>
              <p>
                Approving makes the chosen changes the pipeline's active configuration at once, or serves them
                to a share of the traffic first.
              </p>
              <ApproveOptions
                run={run}
                form={form}
                errors={checked.errors}
                why={initial.why}
                onChange={setForm}
              />
              <ApprovalGateNotice gate={gate} disabled={off || !checked.body} onOverride={approve} />
              <div class="actions">
                <button
                  type="button"
                  class="primary"
                  disabled={off || gate.blocked || !checked.body}
                  onClick={() => approve()}
                >
                  Approve
                </button>
              </div>
            </div>
          )}
          <h3>Reject</h3>
          <label for="reject-reason">Reason for rejecting</label>
          <textarea
            id="reject-reason"
            rows={2}
            placeholder="Why this proposal should not be used (optional, kept with the run)"
            value={reason}
            onInput={(event) => setReason(event.currentTarget.value)}
          />
          <div class="actions">
            <button
              type="button"
              class="danger"
              disabled={off}
              onClick={() => setAsking({ action: 'reject', reason: reason.trim() })}
            >
              Reject
            </button>
          </div>
        </fieldset>
      )}
      {asking ? (
        <DecisionDialog
          action={asking.action}
          override={asking.action === 'approve' && asking.body.override !== undefined}
          onConfirm={() => {
            setAsking(undefined);
            void send(asking);
          }}
          onCancel={() => setAsking(undefined)}
        >
          <p class="decision-words">
            {asking.action === 'approve'
              ? describeApproval(run, asking.body)
              : `The run is closed as rejected: ${run.changes.length === 0 ? 'it proposed nothing' : 'none of its changes can be approved afterwards (a new synthesis may propose them again)'}. ${asking.reason ? `Your reason is kept with the run: “${asking.reason}”.` : 'No reason is given.'}`}
          </p>
        </DecisionDialog>
      ) : null}
    </section>
  );
}
