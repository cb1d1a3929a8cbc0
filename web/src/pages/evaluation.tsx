/**
 * Checking a proposal before approval, on the run page: the evaluation (fixed and regressed cases,
 * each opening its input and both arms' answers; each change replayed alone and the recommendation),
 * the pipeline's approval rules in force, what regressions are judged on, why Approve is disabled,
 * and an admin's override.
 */
import { useState } from 'preact/hooks';
import type { ResponseBody } from '../../../cli/client.ts';
import {
  type FailingRule,
  failingRules,
  type JudgedRegressions,
  judgedRegressions,
} from '../../../lambdas/core/approval-rules.ts';
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
  /** What the regressions of this approval are counted on (null before an evaluation). */
  judged: JudgedRegressions | null;
  error: unknown;
}

/** The pipeline's rules and what they say of approving these changes of the run as the signed-in person. */
export function useApprovalGate(run: Run, chosenChangeIds: readonly string[] | undefined): ApprovalGate {
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
  const attempt = {
    evaluation: run.evaluation,
    runChangeIds: run.changes.map((change) => change.id),
    chosenChangeIds,
    triggeredBy: run.triggeredBy,
    approverUserId: me.user.id,
    overridden: false,
  };
  const failing = rules.data ? failingRules(rules.data, attempt) : [];
  return {
    rules: rules.data,
    failing,
    blocked: failing.length > 0,
    judged: judgedRegressions(attempt),
    error: rules.error,
  };
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

/**
 * The rules in force, what regressions are judged on, why Approve is disabled, and (for admins)
 * an override reason: approving with it goes through the same confirmation and form as Approve.
 */
export function ApprovalGateNotice(props: {
  gate: ApprovalGate;
  disabled: boolean;
  onOverride: (reason: string) => void;
}) {
  const { role } = useSession();
  const { gate } = props;
  const [reason, setReason] = useState('');
  const overridable = gate.failing.every((failure) => failure.rule !== 'forbidSelfApproval');

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
      {gate.judged ? (
        <p class="small judged-regressions">
          Regressions are {gate.judged.text}: {gate.judged.regressed} case
          {gate.judged.regressed === 1 ? '' : 's'} broken.
        </p>
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
              <div class="actions">
                <button
                  type="button"
                  class="primary"
                  disabled={props.disabled || reason.trim() === ''}
                  onClick={() => props.onOverride(reason.trim())}
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

type ChangeOutcome = NonNullable<NonNullable<Run['evaluation']>['changes']>[number];

function outcomeVerdict(outcome: ChangeOutcome): string {
  if (outcome.brokenCount > 0) return 'breaks cases: leave it out';
  return outcome.fixedCount > 0 ? 'fixes cases, breaks none' : 'changes no result';
}

/** Each change replayed alone on the base (`evaluate --per-change`): what it fixed and broke. */
function PerChangeTable({ run, outcomes }: { run: Run; outcomes: ChangeOutcome[] }) {
  const byId = new Map(outcomes.map((outcome) => [outcome.changeId, outcome]));
  const ids = run.changes.map((change) => change.id).sort((a, b) => Number(a) - Number(b));
  return (
    <div class="table-scroll">
      <h3>Each change replayed alone on the base</h3>
      <table class="list cards-on-phone" aria-label="Each change replayed alone">
        <thead>
          <tr>
            <th scope="col">Change</th>
            <th scope="col">Cases</th>
            <th scope="col">Fixed</th>
            <th scope="col">Broken</th>
            <th scope="col">Verdict</th>
          </tr>
        </thead>
        <tbody>
          {ids.map((id) => {
            const outcome = byId.get(id);
            return (
              <tr key={id}>
                <th scope="row" data-label="Change">
                  Change {id}
                </th>
                <td data-label="Cases">{outcome ? outcome.evaluated : '–'}</td>
                <td data-label="Fixed">{outcome ? outcome.fixedCount : '–'}</td>
                <td data-label="Broken" class={outcome?.brokenCount ? 'status-failed' : ''}>
                  {outcome ? outcome.brokenCount : '–'}
                </td>
                <td data-label="Verdict">{outcome ? outcomeVerdict(outcome) : 'not replayed alone'}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
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
          {evaluation.recommendation ? (
            <p class="recommendation">
              <strong>Recommendation:</strong> {evaluation.recommendation.text}
            </p>
          ) : null}
          {evaluation.changes && evaluation.changes.length > 0 ? (
            <PerChangeTable run={run} outcomes={evaluation.changes} />
          ) : null}
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
