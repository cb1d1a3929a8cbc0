/**
 * Checking a proposal before approval, on the run page: the evaluation (fixed and regressed cases,
 * each opening its input and both arms' answers), the pipeline's approval rules in force, why
 * Approve is disabled, and an admin's override.
 */
import { useState } from 'preact/hooks';
import type { ResponseBody } from '../../../cli/client.ts';
import { type FailingRule, failingRules } from '../../../lambdas/core/approval-rules.ts';
import { api, client } from '../api.ts';
import { formatDuration } from '../format.ts';
import { useSession } from '../session.ts';
import type { Run } from '../types.ts';
import { ErrorNotice, Loading, useLoad } from '../ui.tsx';

type ApprovalRules = ResponseBody<'get-approval-rules'>;
type EvaluationCase = ResponseBody<'get-synthesis-run-evaluation-set'>['cases'][number];
type ArmResult = NonNullable<NonNullable<EvaluationCase['results']>['base']>;

export interface ApprovalGate {
  rules: ApprovalRules | undefined;
  /** The rules this approval would break now (empty: Approve is enabled). */
  failing: FailingRule[];
  blocked: boolean;
  error: unknown;
}

/** The pipeline's rules and what they say of approving this run as the signed-in person. */
export function useApprovalGate(run: Run): ApprovalGate {
  const { me } = useSession();
  const rules = useLoad(
    () =>
      api(
        client.GET('/pipelines/{pipelineId}/approval-rules', {
          params: { path: { pipelineId: run.pipelineId } },
        }),
      ),
    [run.pipelineId],
  );
  const failing = rules.data
    ? failingRules(rules.data, {
        evaluation: run.evaluation,
        triggeredBy: run.triggeredBy,
        approverUserId: me.user.id,
        overridden: false,
      })
    : [];
  return { rules: rules.data, failing, blocked: failing.length > 0, error: rules.error };
}

const RULE_LABELS: Record<keyof Omit<ApprovalRules, 'pipelineId' | 'updatedAt' | 'updatedBy'>, string> = {
  requireEvaluation: 'An evaluation is required',
  maxRegressions: 'Regressed cases allowed',
  minEvaluatedCases: 'Cases evaluated on both arms, at least',
  forbidSelfApproval: 'Who started the run may not approve it',
  allowApiTokens: 'API tokens may approve',
};

function ruleValue(value: unknown): string {
  return typeof value === 'boolean' ? (value ? 'yes' : 'no') : String(value);
}

/** The rules in force, why Approve is disabled, and (for admins) approving with an override. */
export function ApprovalGateNotice(props: { gate: ApprovalGate; run: Run; onDecided: (run: Run) => void }) {
  const { role } = useSession();
  const { gate } = props;
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const overridable = gate.failing.every((failure) => failure.rule !== 'forbidSelfApproval');

  const approveWithOverride = async () => {
    setBusy(true);
    setError(undefined);
    try {
      props.onDecided(
        await api(
          client.POST('/synthesis-runs/{id}/approve', {
            params: { path: { id: props.run.id } },
            body: { override: { reason: reason.trim() } },
          }),
        ),
      );
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };

  return (
    <div class="approval-rules">
      <ErrorNotice error={gate.error} />
      {gate.rules ? (
        <details>
          <summary>Approval rules in force</summary>
          <dl class="rule-list" aria-label="Approval rules">
            {Object.entries(RULE_LABELS).map(([key, label]) => (
              <>
                <dt>{label}</dt>
                <dd>{ruleValue(gate.rules?.[key as keyof typeof RULE_LABELS])}</dd>
              </>
            ))}
          </dl>
        </details>
      ) : null}
      {gate.blocked ? (
        <div class="notice notice-warning" role="status" aria-label="Why Approve is disabled">
          <p>
            <strong>Approve is disabled</strong> by the pipeline's approval rules:
          </p>
          <ul>
            {gate.failing.map((failure) => (
              <li key={failure.rule}>{failure.message}</li>
            ))}
          </ul>
          {role === 'admin' && overridable ? (
            <>
              <label for="override-reason">Override reason (admins)</label>
              <textarea
                id="override-reason"
                rows={2}
                placeholder="Why this proposal may be approved against the rules (kept with the run)"
                value={reason}
                onInput={(event) => setReason(event.currentTarget.value)}
              />
              <ErrorNotice error={error} />
              <div class="actions">
                <button
                  type="button"
                  class="primary"
                  disabled={busy || reason.trim() === ''}
                  onClick={() => void approveWithOverride()}
                >
                  Approve with override
                </button>
              </div>
            </>
          ) : role === 'admin' ? (
            <p class="muted">An override passes the evaluation rules only: another person must approve.</p>
          ) : null}
        </div>
      ) : null}
    </div>
  );
}

function ArmAnswer({ arm, result }: { arm: string; result: ArmResult | undefined }) {
  if (!result) return <p class="muted">{arm}: no result</p>;
  const figures = [
    result.durationMs === undefined ? null : `${result.durationMs} ms`,
    result.costUsd === undefined ? null : `$${result.costUsd}`,
    result.score === undefined ? null : `score ${result.score}`,
  ].filter((figure) => figure !== null);
  return (
    <p>
      <strong>{arm}</strong>: {result.passed ? 'passed' : 'failed'}
      {figures.length > 0 ? ` (${figures.join(', ')})` : ''}
      {result.detail ? <pre class="evaluation-detail">{result.detail}</pre> : null}
    </p>
  );
}

function CaseDetails({ evaluationCase, verdict }: { evaluationCase: EvaluationCase; verdict: string }) {
  return (
    <li>
      <details>
        <summary>
          <code>{evaluationCase.executionId}</code> · {verdict} · recorded {evaluationCase.status} (
          {evaluationCase.reason})
        </summary>
        <p>Input</p>
        <pre class="evaluation-input">
          {evaluationCase.input === undefined
            ? '(none recorded)'
            : JSON.stringify(evaluationCase.input, null, 2)}
        </pre>
        <ArmAnswer arm="Base" result={evaluationCase.results?.base} />
        <ArmAnswer arm="Candidate" result={evaluationCase.results?.candidate} />
      </details>
    </li>
  );
}

const signed = (value: number, unit: string) =>
  `${value >= 0 ? '+' : ''}${Math.round(value * 1000) / 1000}${unit}`;

/** The run's evaluation: its stored summary, and the fixed and regressed cases opened from the set. */
export function EvaluationSection({ run }: { run: Run }) {
  const evaluation = run.evaluation;
  const set = useLoad(
    async () =>
      evaluation && (evaluation.fixed.length > 0 || evaluation.regressed.length > 0)
        ? api(client.GET('/synthesis-runs/{id}/evaluation-set', { params: { path: { id: run.id } } }))
        : undefined,
    [run.id, evaluation?.updatedAt],
  );
  if (!run.proposedConfigurationId) return null;
  const byId = new Map((set.data?.cases ?? []).map((c) => [c.executionId, c]));
  const list = (ids: string[], verdict: string) =>
    ids.flatMap((id) => {
      const found = byId.get(id);
      return found ? [<CaseDetails key={id} evaluationCase={found} verdict={verdict} />] : [];
    });
  return (
    <section aria-labelledby="evaluation" class="card evaluation">
      <h2 id="evaluation">Evaluation</h2>
      {evaluation ? (
        <>
          <p class="evaluation-summary">
            {evaluation.evaluated} of {evaluation.cases} cases replayed on both configurations: base{' '}
            {evaluation.base.passed} passed, candidate {evaluation.candidate.passed} passed ·{' '}
            <strong>{evaluation.fixed.length} fixed</strong> ·{' '}
            <strong class={evaluation.regressed.length > 0 ? 'status-failed' : ''}>
              {evaluation.regressed.length} regressed
            </strong>
            {evaluation.durationMsDelta === null
              ? ''
              : ` · duration ${evaluation.durationMsDelta < 0 ? '-' : '+'}${formatDuration(Math.abs(evaluation.durationMsDelta))} a case`}
            {evaluation.costUsdDelta === null ? '' : ` · cost ${signed(evaluation.costUsdDelta, ' USD')}`}
          </p>
          <ErrorNotice error={set.error} />
          {set.loading && !set.data && (evaluation.fixed.length > 0 || evaluation.regressed.length > 0) ? (
            <Loading what="the cases" />
          ) : null}
          {evaluation.regressed.length > 0 ? (
            <>
              <h3>Regressed</h3>
              <ul class="evaluation-cases" aria-label="Regressed cases">
                {list(evaluation.regressed, 'regressed')}
              </ul>
            </>
          ) : null}
          {evaluation.fixed.length > 0 ? (
            <>
              <h3>Fixed</h3>
              <ul class="evaluation-cases" aria-label="Fixed cases">
                {list(evaluation.fixed, 'fixed')}
              </ul>
            </>
          ) : null}
        </>
      ) : run.status === 'generated' ? (
        <p class="muted">
          Not evaluated yet. Replay the recorded cases on both configurations with{' '}
          <code>pipeline-synthesis evaluate {run.id} --exec "node runner.mjs"</code>.
        </p>
      ) : (
        <p class="muted">Not evaluated: the run was {run.status} without an evaluation.</p>
      )}
    </section>
  );
}
