/**
 * One synthesis run: its status, polled with backoff until it settles; its facts (handler,
 * confidence, model usage, timings); the proposal; and the decision, with a 409 told in words.
 */
import { useEffect, useState } from 'preact/hooks';
import { ApiError, api, client } from '../api.ts';
import { between, formatCount } from '../format.ts';
import { isSettled, nextPollDelay } from '../poll.ts';
import { Link } from '../router.tsx';
import type { Run, RunDiff } from '../types.ts';
import { ErrorNotice, Loading, Person, Time, useLoad, useTitle } from '../ui.tsx';
import { ShippedChanges } from './approve-form.tsx';
import { ChainSection } from './chain.tsx';
import { Decide } from './decide.tsx';
import { EffectPanel } from './effect.tsx';
import { EvaluationSection } from './evaluation.tsx';
import { getConfiguration, getPipeline } from './pipeline.tsx';
import { Diagnosis, Proposal, type ProposalData } from './proposal.tsx';
import { RolloutPanel } from './release.tsx';
import { RetryWithHeuristic, RolloutOutcome } from './run-outcome.tsx';

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

// Servers without the evidence route (or runs from before it) answer 404: show the ids then.
const loadEvidence = (run: Run) =>
  api(client.GET('/synthesis-runs/{id}/evidence', { params: { path: { id: run.id } } })).catch(
    (error: unknown) => {
      if (error instanceof ApiError && error.status === 404) return null;
      throw error;
    },
  );

async function loadProposal(run: Run): Promise<ProposalData> {
  const params = { path: { id: run.id } };
  const [base, proposed, diff, evidence] = await Promise.all([
    getConfiguration(run.pipelineId, run.baseConfigurationId),
    getConfiguration(run.pipelineId, run.proposedConfigurationId ?? ''),
    api(client.GET('/synthesis-runs/{id}/diff', { params })),
    loadEvidence(run),
  ]);
  return { base, proposed, diff, evidence };
}

/** A run that proposes nothing still has its diagnosis and warnings (the CLI prints them too). */
function NoProposalDiagnosis({ run }: { run: Run }) {
  const evidence = useLoad(() => loadEvidence(run), [run.id]);
  if (evidence.error) return <ErrorNotice error={evidence.error} />;
  if (evidence.loading && evidence.data === undefined) return <Loading what="the diagnosis" />;
  return <Diagnosis run={run} evidence={evidence.data ?? null} />;
}

export function RunPage({ runId }: { runId: string }) {
  useTitle('Synthesis run');
  const { run, setRun, error } = usePolledRun(runId);
  // Bumped when the rollout panel ends the rollout, so the status line reads its outcome again.
  const [rolloutEnds, setRolloutEnds] = useState(0);
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
        {run.rolloutId ? <RolloutOutcome run={run} version={rolloutEnds} /> : null}
      </p>
      <ErrorNotice error={error} />
      {run.status === 'failed' && run.errorMessage ? (
        <div class="notice notice-error" role="alert">
          <p>The run failed: {run.errorMessage}</p>
          <RetryWithHeuristic run={run} />
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
      {run.status !== 'failed' && isSettled(run.status) && !run.proposedConfigurationId ? (
        <NoProposalDiagnosis run={run} />
      ) : null}
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
      {run.status === 'approved' ? <ShippedChanges run={run} /> : null}
      {run.status === 'approved' && run.rolloutId ? (
        <RolloutPanel run={run} onEnded={() => setRolloutEnds((n) => n + 1)} />
      ) : null}
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
            ? run.synthesisHandler === 'heuristic-v1'
              ? 'none (this handler calls no model)'
              : run.status === 'failed'
                ? 'none: the run failed before the model answered'
                : 'none recorded'
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
