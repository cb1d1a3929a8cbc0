/**
 * A proposal the way a reviewer reads it: the diagnosis, each finding with the signals and
 * executions it cites (the records, not their ids), each change with its rationale, the findings
 * it answers, the warnings that name it, and its slot's settings side by side.
 */
import type { ComponentChildren } from 'preact';
import { formatDuration, listWords } from '../format.ts';
import type {
  Configuration,
  Evidence,
  Execution,
  Finding,
  Run,
  RunDiff,
  Signal,
  StructuredWarning,
} from '../types.ts';
import { Time } from '../ui.tsx';
import { SettingsDiff } from './settings-diff.tsx';

export interface ProposalData {
  base: Configuration;
  proposed: Configuration;
  diff: RunDiff;
  /** null: the server does not provide the cited records; their ids are shown instead. */
  evidence: Evidence | null;
}

type Change = Run['changes'][number];

/** An in-page link to a finding (the shell's <base href> would turn a bare #id into another page). */
const findingHref = (id: string) => `${window.location.pathname}#finding-${id}`;

/** The diagnosis with its findings and their evidence, and the warnings naming no change of the run. */
export function Diagnosis({ run, evidence }: { run: Run; evidence: Evidence | null }) {
  const changeIds = new Set(run.changes.map((change) => change.id));
  const general = run.structuredWarnings.filter(
    (warning) => !warning.changeIds?.some((id) => changeIds.has(id)),
  );
  return (
    <>
      <section aria-labelledby="diagnosis">
        <h2 id="diagnosis">Diagnosis</h2>
        {run.diagnosis ? (
          <p class="summary">{run.diagnosis.summary}</p>
        ) : (
          <pre class="value">{run.explanation}</pre>
        )}
        {run.diagnosis && run.diagnosis.findings.length > 0 ? (
          <ol class="findings" aria-label="Findings">
            {run.diagnosis.findings.map((finding) => (
              <FindingItem key={finding.id} finding={finding} evidence={evidence} />
            ))}
          </ol>
        ) : null}
      </section>
      {general.length > 0 ? (
        <section aria-labelledby="warnings">
          <h2 id="warnings">Warnings</h2>
          <Warnings warnings={general} />
        </section>
      ) : null}
    </>
  );
}

/** The slots a change touches, in the order of their first change's number. */
function slotsInChangeOrder(run: Run, diff: RunDiff): RunDiff['slots'] {
  const first = (slotId: string) =>
    Math.min(...run.changes.filter((change) => change.slotId === slotId).map((change) => Number(change.id)));
  return diff.slots
    .filter((slot) => slot.status !== 'unchanged' || slot.changeIds.length > 0)
    .sort((a, b) => first(a.slotId) - first(b.slotId));
}

export function Proposal({ run, data }: { run: Run; data: ProposalData }) {
  return (
    <>
      <Diagnosis run={run} evidence={data.evidence} />
      <section aria-labelledby="changes">
        <h2 id="changes">Changes</h2>
        {run.changes.length === 0 ? <p class="muted">The proposal changes nothing.</p> : null}
        {slotsInChangeOrder(run, data.diff).map((slot) => (
          <section key={slot.slotId} class="card change-slot" aria-labelledby={`slot-${slot.slotId}`}>
            <h3 id={`slot-${slot.slotId}`}>
              {slot.name} <span class="tag">{slot.kind}</span>{' '}
              <span class={`tag tag-${slot.status}`}>{slot.status}</span>
            </h3>
            {run.changes
              .filter((change) => change.slotId === slot.slotId)
              .sort((a, b) => Number(a.id) - Number(b.id))
              .map((change) => (
                <ChangeItem key={change.id} change={change} warnings={run.structuredWarnings} />
              ))}
            <SettingsDiff
              slotName={slot.name}
              before={data.base.slots.find((candidate) => candidate.id === slot.slotId)?.settings}
              after={data.proposed.slots.find((candidate) => candidate.id === slot.slotId)?.settings}
              baseVersion={data.diff.base.version}
              proposedVersion={data.diff.proposed.version}
            />
          </section>
        ))}
        <UnchangedSlots diff={data.diff} />
      </section>
    </>
  );
}

function FindingItem({ finding, evidence }: { finding: Finding; evidence: Evidence | null }) {
  const { executionIds } = finding;
  return (
    <li id={`finding-${finding.id}`} class="card finding">
      <h3>Finding {finding.id}</h3>
      <p>{finding.description}</p>
      <Cited what="signal" ids={finding.signalIds} evidence={evidence}>
        {(id) => <SignalRecord id={id} signal={evidence?.signals.find((signal) => signal.id === id)} />}
      </Cited>
      {executionIds.length > 0 ? (
        <Cited what="execution" ids={executionIds} evidence={evidence}>
          {(id) => (
            <ExecutionRecord
              id={id}
              execution={evidence?.executions.find((execution) => execution.id === id)}
            />
          )}
        </Cited>
      ) : null}
    </li>
  );
}

function Cited(props: {
  what: 'signal' | 'execution';
  ids: string[];
  evidence: Evidence | null;
  children: (id: string) => ComponentChildren;
}) {
  const label = `${props.ids.length} ${props.what}${props.ids.length === 1 ? '' : 's'} cited`;
  if (!props.evidence) {
    return (
      <p class="small">
        {label}: <code>{props.ids.join(', ')}</code>{' '}
        <span class="muted">(this server does not show the cited records)</span>
      </p>
    );
  }
  return (
    <>
      <h4 class="small">{label}</h4>
      <ul class="evidence" aria-label={label}>
        {props.ids.map((id) => (
          <li key={id}>{props.children(id)}</li>
        ))}
      </ul>
    </>
  );
}

function SignalRecord({ id, signal }: { id: string; signal: Signal | undefined }) {
  if (!signal) return <span class="muted">Signal {id} (no longer available)</span>;
  return (
    <>
      <span class={`severity severity-${signal.severity}`}>{signal.severity}</span>{' '}
      <strong>{signal.kind}</strong> {signal.message}
      <span class="muted small">
        {' '}
        · {signal.slotId ? `slot ${signal.slotId} · ` : ''}
        {signal.value !== undefined ? `value ${signal.value} · ` : ''}
        <Time iso={signal.occurredAt} />
      </span>
    </>
  );
}

function ExecutionRecord({ id, execution }: { id: string; execution: Execution | undefined }) {
  if (!execution) return <span class="muted">Execution {id} (no longer available)</span>;
  const failedSlots = (execution.slotResults ?? []).filter((slot) => slot.status === 'failed');
  return (
    <>
      <span class={`status status-${execution.status}`}>{execution.status}</span> in{' '}
      {formatDuration(execution.durationMs)}
      {execution.error ? <> · {execution.error}</> : null}
      {failedSlots.length > 0 ? <> · failed in {listWords(failedSlots.map((slot) => slot.slotId))}</> : null}
      <span class="muted small">
        {' '}
        · <Time iso={execution.startedAt} />
      </span>
      {execution.input === undefined ? null : (
        <details class="execution-input">
          <summary>Input</summary>
          <pre class="evaluation-input">{JSON.stringify(execution.input, null, 2)}</pre>
        </details>
      )}
    </>
  );
}

function ChangeItem({ change, warnings }: { change: Change; warnings: StructuredWarning[] }) {
  const own = warnings.filter((warning) => warning.changeIds?.includes(change.id));
  return (
    <article class="change" aria-labelledby={`change-${change.id}`}>
      <h4 id={`change-${change.id}`}>
        Change {change.id}: {change.description}
      </h4>
      <p>
        <strong>Why:</strong> {change.rationale}
      </p>
      {change.findingIds.length > 0 ? (
        <p class="small">
          Answers{' '}
          {change.findingIds.map((id, index) => (
            <span key={id}>
              {index > 0 ? ', ' : ''}
              <a href={findingHref(id)}>finding {id}</a>
            </span>
          ))}
        </p>
      ) : null}
      {own.length > 0 ? <Warnings warnings={own} /> : null}
    </article>
  );
}

function Warnings({ warnings }: { warnings: StructuredWarning[] }) {
  return (
    <ul class="warnings" aria-label="Warnings">
      {warnings.map((warning, index) => (
        <li key={`${warning.type}-${index}`} class="warning">
          <span class="tag tag-warning">{warning.type.replaceAll('_', ' ')}</span> {warning.message}
        </li>
      ))}
    </ul>
  );
}

function UnchangedSlots({ diff }: { diff: RunDiff }) {
  const unchanged = diff.slots.filter((slot) => slot.status === 'unchanged' && slot.changeIds.length === 0);
  if (unchanged.length === 0) return null;
  return <p class="muted small">Unchanged: {listWords(unchanged.map((slot) => slot.name))}.</p>;
}
