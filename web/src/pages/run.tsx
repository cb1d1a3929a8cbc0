/**
 * One synthesis run: its status, polled with backoff until it settles; its facts (handler,
 * confidence, model usage, timings); the proposal; and the decision, with a 409 told in words.
 */
import { useEffect, useState } from 'preact/hooks';
import { ApiError, api, client } from '../api.ts';
import { type ConflictExplanation, explainConflict } from '../conflict.ts';
import { between, formatCount } from '../format.ts';
import { isSettled, nextPollDelay } from '../poll.ts';
import { Link } from '../router.tsx';
import { useSession } from '../session.ts';
import type { Pipeline, Run, RunDiff } from '../types.ts';
import { ErrorNotice, Loading, Person, Time, useLoad, useTitle } from '../ui.tsx';
import { ChainSection } from './chain.tsx';
import { EffectPanel } from './effect.tsx';
import { ApprovalGateNotice, EvaluationSection, useApprovalGate } from './evaluation.tsx';
import { getConfiguration, getPipeline } from './pipeline.tsx';
import { Proposal, type ProposalData } from './proposal.tsx';
import {
  type ApproveChoice,
  ApproveOptions,
  conflictsOf,
  type RebaseConflict,
  RebaseConflicts,
  RolloutPanel,
} from './release.tsx';

/** The run, read again with backoff while a worker may still move it. */
function usePolledRun(runId: string) {
  const [run, setRun] = useState<Run>();
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let delay: number | undefined;
    const poll = async () => {
      try {
        const current = await getRun(runId);
        if (stopped) return;
        setRun(current);
        setError(undefined);
        if (isSettled(current.status)) return;
      } catch (caught) {
        if (stopped) return;
        setError(caught);
        // A missing or foreign run will not appear by asking again; a network blip or a 5xx may pass.
        if (
          caught instanceof ApiError &&
          caught.status >= 400 &&
          caught.status < 500 &&
          caught.status !== 429
        )
          return;
      }
      delay = nextPollDelay(delay);
      timer = setTimeout(poll, delay);
    };
    void poll();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [runId]);
  return { run, setRun, error };
}

const getRun = (id: string) => api(client.GET('/synthesis-runs/{id}', { params: { path: { id } } }));

async function loadProposal(run: Run): Promise<ProposalData> {
  const params = { path: { id: run.id } };
  const [base, proposed, diff, evidence] = await Promise.all([
    getConfiguration(run.pipelineId, run.baseConfigurationId),
    getConfiguration(run.pipelineId, run.proposedConfigurationId ?? ''),
    api(client.GET('/synthesis-runs/{id}/diff', { params })),
    // Servers without the evidence route (or runs from before it) answer 404: show the ids then.
    api(client.GET('/synthesis-runs/{id}/evidence', { params })).catch((error: unknown) => {
      if (error instanceof ApiError && error.status === 404) return null;
      throw error;
    }),
  ]);
  return { base, proposed, diff, evidence };
}

export function RunPage({ runId }: { runId: string }) {
  useTitle('Synthesis run');
  const { run, setRun, error } = usePolledRun(runId);
  const pipeline = useLoad(async () => (run ? getPipeline(run.pipelineId) : undefined), [run?.pipelineId]);
  const proposal = useLoad(
    async () => (run?.proposedConfigurationId ? loadProposal(run) : undefined),
    [run?.id, run?.proposedConfigurationId],
  );

  if (!run) return error ? <ErrorNotice error={error} /> : <Loading what="the run" />;
  return (
    <>
      <nav aria-label="Breadcrumbs" class="breadcrumbs">
        <Link to="">Pipelines</Link> ›{' '}
        <Link to={`pipelines/${encodeURIComponent(run.pipelineId)}`}>
          {pipeline.data?.name ?? 'Pipeline'}
        </Link>
      </nav>
      <h1>Synthesis run</h1>
      <p class="status-line">
        Status:{' '}
        <output aria-label="Run status" class={`status status-${run.status}`}>
          {run.status}
        </output>
        {isSettled(run.status) ? null : <span class="muted small"> · updating by itself</span>}
      </p>
      <ErrorNotice error={error} />
      {run.status === 'failed' && run.errorMessage ? (
        <div class="notice notice-error" role="alert">
          <p>The run failed: {run.errorMessage}</p>
        </div>
      ) : null}
      <Facts run={run} diff={proposal.data?.diff} />
      {nothingToChange(run) ? (
        <div class="notice" role="status">
          <h2>Nothing to change</h2>
          <p>
            {run.structuredWarnings.find((warning) => warning.type === 'no_changes')?.message ??
              'This run found no change to propose.'}{' '}
            There is no proposal to approve, evaluate or roll out; reject the run to close it.
          </p>
        </div>
      ) : null}
      <ErrorNotice error={proposal.error} />
      {run.proposedConfigurationId && proposal.loading && !proposal.data ? (
        <Loading what="the proposal" />
      ) : null}
      {proposal.data ? <Proposal run={run} data={proposal.data} /> : null}
      {nothingToChange(run) ? null : <EvaluationSection run={run} />}
      <ChainSection run={run} />
      {run.status === 'generated' ? (
        <Decide
          run={run}
          pipeline={pipeline.data}
          baseVersion={proposal.data?.diff.base.version}
          onDecided={setRun}
        />
      ) : null}
      {run.status === 'approved' && !run.rolloutId ? (
        <div class="notice notice-ok" role="status">
          <p>
            Approved
            {run.approvedChangeIds && run.approvedChangeIds.length < run.changes.length
              ? ` (changes ${run.approvedChangeIds.join(', ')})`
              : ''}
            {`: ${
              run.appliedConfigurationId && run.appliedConfigurationId !== run.proposedConfigurationId
                ? 'a new configuration'
                : proposal.data
                  ? `version ${proposal.data.diff.proposed.version}`
                  : 'the proposal'
            } became the active configuration of `}
            <Link to={`pipelines/${encodeURIComponent(run.pipelineId)}`}>
              {pipeline.data?.name ?? 'the pipeline'}
            </Link>
            .
          </p>
        </div>
      ) : null}
      {run.status === 'approved' && run.rolloutId ? <RolloutPanel run={run} /> : null}
      {run.status === 'approved' ? <EffectPanel run={run} /> : null}
      {run.status === 'rejected' ? (
        <div class="notice" role="status">
          <p>Rejected{run.rejectionReason ? `: ${run.rejectionReason}` : ' (no reason given)'}.</p>
        </div>
      ) : null}
    </>
  );
}

function Facts({ run, diff }: { run: Run; diff: RunDiff | undefined }) {
  const usage = run.usage;
  return (
    <dl class="facts">
      <dt>Handler</dt>
      <dd>{run.synthesisHandler}</dd>
      <dt>Confidence</dt>
      <dd>{run.confidence ?? '—'}</dd>
      <dt>Started</dt>
      <dd>
        <Time iso={run.createdAt} /> by <Person name={run.triggeredByName} id={run.triggeredBy} />
      </dd>
      <dt>Waited in queue</dt>
      <dd>{between(run.createdAt, run.generationStartedAt) ?? '—'}</dd>
      <dt>Generation took</dt>
      <dd>{between(run.generationStartedAt, run.generationCompletedAt) ?? '—'}</dd>
      <dt>Model usage</dt>
      <dd>
        {usage
          ? `${usage.model}: ${formatCount(usage.inputTokens)} input and ${formatCount(usage.outputTokens)} output tokens in ${usage.attempts} request${usage.attempts === 1 ? '' : 's'}`
          : isSettledWithoutModel(run)
            ? 'none (this handler calls no model)'
            : '—'}
      </dd>
      <dt>Configuration</dt>
      <dd>
        {diff ? (
          `version ${diff.base.version} → proposed version ${diff.proposed.version}`
        ) : (
          <>
            made from <code>{run.baseConfigurationId}</code>
          </>
        )}
      </dd>
      {run.approvedAt ? (
        <>
          <dt>Approved</dt>
          <dd>
            <Time iso={run.approvedAt} /> by <Person name={run.approvedByName} id={run.approvedBy} />
          </dd>
        </>
      ) : null}
      {run.rejectedAt ? (
        <>
          <dt>Rejected</dt>
          <dd>
            <Time iso={run.rejectedAt} /> by <Person name={run.rejectedByName} id={run.rejectedBy} />
          </dd>
        </>
      ) : null}
    </dl>
  );
}

const isSettledWithoutModel = (run: Run) => isSettled(run.status) && run.usage === null;

/** A generated run that proposes nothing (the API keeps no configuration for it). */
const nothingToChange = (run: Run) => run.status === 'generated' && run.proposedConfigurationId === null;

/** After a 409: reads where the run and the pipeline stand now, and says what happened. */
async function explainDecisionConflict(
  action: 'approve' | 'reject',
  known: { run: Run; pipeline: Pipeline | undefined; baseVersion: number | undefined; userId: string },
): Promise<ConflictExplanation> {
  const run = await getRun(known.run.id).catch(() => known.run);
  const pipeline = await getPipeline(run.pipelineId).catch(() => known.pipeline);
  const active = pipeline
    ? await getConfiguration(run.pipelineId, pipeline.activeConfigurationId).catch(() => undefined)
    : undefined;
  return explainConflict({
    action,
    run,
    userId: known.userId,
    activeConfigurationId: pipeline?.activeConfigurationId,
    activeVersion: active?.version,
    baseVersion: known.baseVersion,
  });
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

function Decide(props: {
  run: Run;
  pipeline: Pipeline | undefined;
  baseVersion: number | undefined;
  onDecided: (run: Run) => void;
}) {
  const { me, canWrite } = useSession();
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const [conflict, setConflict] = useState<ConflictExplanation>();
  const gate = useApprovalGate(props.run);
  const [choice, setChoice] = useState<ApproveChoice>({});
  const [rebaseConflicts, setRebaseConflicts] = useState<RebaseConflict[]>([]);

  const decide = async (action: 'approve' | 'reject') => {
    setBusy(true);
    setError(undefined);
    setConflict(undefined);
    setRebaseConflicts([]);
    const params = { path: { id: props.run.id } };
    try {
      const trimmed = reason.trim();
      const decided = await api(
        action === 'approve'
          ? client.POST('/synthesis-runs/{id}/approve', { params, body: choice })
          : client.POST('/synthesis-runs/{id}/reject', { params, body: trimmed ? { reason: trimmed } : {} }),
      );
      props.onDecided(decided);
    } catch (caught) {
      if (conflictsOf(caught).length > 0) {
        setRebaseConflicts(conflictsOf(caught));
      } else if (caught instanceof ApiError && caught.status === 409) {
        setConflict(await explainDecisionConflict(action, { ...props, userId: me.user.id }));
      } else {
        setError(caught);
      }
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="decide" class="card decide">
      <h2 id="decide">Decide</h2>
      {conflict ? <ConflictNotice conflict={conflict} /> : null}
      {rebaseConflicts.length > 0 ? <RebaseConflicts conflicts={rebaseConflicts} /> : null}
      <ErrorNotice error={error} />
      {canWrite ? (
        <>
          {nothingToChange(props.run) ? null : (
            <div class="decide-approve">
              <h3>Approve</h3>
              <p>
                Approving makes the chosen changes the pipeline's active configuration at once, or serves them
                to a share of the traffic first.
              </p>
              <ApproveOptions run={props.run} onChange={setChoice} />
              <ApprovalGateNotice gate={gate} run={props.run} onDecided={props.onDecided} />
              <div class="actions">
                <button
                  type="button"
                  class="primary"
                  disabled={busy || gate.blocked || choice.changeIds?.length === 0}
                  onClick={() => void decide('approve')}
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
            <button type="button" class="danger" disabled={busy} onClick={() => void decide('reject')}>
              Reject
            </button>
          </div>
        </>
      ) : (
        <p class="muted">Viewers can read proposals but not decide on them.</p>
      )}
    </section>
  );
}
