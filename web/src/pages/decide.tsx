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
import { type ApprovalGate, ApprovalGateNotice, useApprovalGate } from './evaluation.tsx';
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

/** Sends a decision; after a 409, says what happened and closes the form when the run was decided meanwhile. */
function useSend(
  props: {
    run: Run;
    pipeline: Pipeline | undefined;
    baseVersion: number | undefined;
    onDecided: (run: Run) => void;
  },
  userId: string,
) {
  const { run } = props;
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const [conflict, setConflict] = useState<ConflictExplanation>();
  // The run was decided meanwhile (a 409 said so): nothing here can be sent any more.
  const [closed, setClosed] = useState(false);
  const [rebaseConflicts, setRebaseConflicts] = useState<RebaseConflict[]>([]);
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
        const now = await explainDecisionConflict(decision.action, { ...props, userId });
        setConflict(now.explanation);
        if (now.run.status !== 'generated') setClosed(true);
      } else {
        setError(caught);
      }
    } finally {
      setBusy(false);
    }
  };
  return { send, busy, error, conflict, closed, rebaseConflicts };
}

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
  const [asking, setAsking] = useState<Asking>();
  const checked = checkApproveForm(run, form);
  const chosenIds = changesByNumber(run)
    .map((change) => change.id)
    .filter((id) => form.chosen.has(id));
  const gate = useApprovalGate(run, chosenIds.length === run.changes.length ? undefined : chosenIds);

  const { send, busy, error, conflict, closed, rebaseConflicts } = useSend(props, me.user.id);
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
            <ApproveFields
              run={run}
              form={form}
              onChange={setForm}
              why={initial.why}
              gate={gate}
              disabled={off}
              onApprove={approve}
            />
          )}
          <RejectFields
            reason={reason}
            disabled={off}
            onInput={setReason}
            onReject={() => setAsking({ action: 'reject', reason: reason.trim() })}
          />
        </fieldset>
      )}
      {asking ? (
        <AskFirst
          run={run}
          asking={asking}
          onConfirm={() => {
            setAsking(undefined);
            void send(asking);
          }}
          onCancel={() => setAsking(undefined)}
        />
      ) : null}
    </section>
  );
}

/** Approve: the form, the rules' gate (and an admin's override), and the button. */
function ApproveFields(props: {
  run: Run;
  form: ApproveForm;
  onChange: (form: ApproveForm) => void;
  why: ReadonlyMap<string, string>;
  gate: ApprovalGate;
  disabled: boolean;
  onApprove: (override?: string) => void;
}) {
  const checked = checkApproveForm(props.run, props.form);
  return (
    <div class="decide-approve">
      <h3>Approve</h3>
      <p>
        Approving makes the chosen changes the pipeline's active configuration at once, or serves them to a
        share of the traffic first.
      </p>
      <ApproveOptions
        run={props.run}
        form={props.form}
        errors={checked.errors}
        why={props.why}
        onChange={props.onChange}
      />
      <ApprovalGateNotice
        gate={props.gate}
        disabled={props.disabled || !checked.body}
        onOverride={props.onApprove}
      />
      <div class="actions">
        <button
          type="button"
          class="primary"
          disabled={props.disabled || props.gate.blocked || !checked.body}
          onClick={() => props.onApprove()}
        >
          Approve
        </button>
      </div>
    </div>
  );
}

/** Reject, right after its reason. */
function RejectFields(props: {
  reason: string;
  disabled: boolean;
  onInput: (reason: string) => void;
  onReject: () => void;
}) {
  return (
    <>
      <h3>Reject</h3>
      <label for="reject-reason">Reason for rejecting</label>
      <textarea
        id="reject-reason"
        rows={2}
        placeholder="Why this proposal should not be used (optional, kept with the run)"
        value={props.reason}
        onInput={(event) => props.onInput(event.currentTarget.value)}
      />
      <div class="actions">
        <button type="button" class="danger" disabled={props.disabled} onClick={props.onReject}>
          Reject
        </button>
      </div>
    </>
  );
}

/** The confirmation of a decision, saying what it will do. */
function AskFirst(props: { run: Run; asking: Asking; onConfirm: () => void; onCancel: () => void }) {
  const { run, asking } = props;
  return (
    <DecisionDialog
      action={asking.action}
      override={asking.action === 'approve' && asking.body.override !== undefined}
      onConfirm={props.onConfirm}
      onCancel={props.onCancel}
    >
      <p class="decision-words">
        {asking.action === 'approve'
          ? describeApproval(run, asking.body)
          : `The run is closed as rejected: ${run.changes.length === 0 ? 'it proposed nothing' : 'none of its changes can be approved afterwards (a new synthesis may propose them again)'}. ${asking.reason ? `Your reason is kept with the run: “${asking.reason}”.` : 'No reason is given.'}`}
      </p>
    </DecisionDialog>
  );
}
