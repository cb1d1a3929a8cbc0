/**
 * The approve form's fields (a checkbox per change in number order, rebase, a rollout's share and
 * minimum executions with their errors on the field), the confirmation of a decision in words, and
 * what an approved run shipped and left out.
 */
import type { ComponentChildren } from 'preact';
import {
  type ApproveForm,
  changesByNumber,
  DEFAULT_MIN_EXECUTIONS,
  type FormErrors,
} from '../approval-choice.ts';
import { listWords } from '../format.ts';
import type { Run } from '../types.ts';
import { ConfirmDialog } from '../ui.tsx';

/** A text box with its unit after it and its error under it, tied to it for screen readers. */
function NumberField(props: {
  id: string;
  label: string;
  unit: string;
  value: string;
  error: string | undefined;
  placeholder?: string;
  onInput: (value: string) => void;
}) {
  const errorId = `${props.id}-error`;
  return (
    <>
      <label for={props.id}>{props.label}</label>
      <span class="with-unit">
        <input
          id={props.id}
          type="text"
          inputMode="numeric"
          autoComplete="off"
          placeholder={props.placeholder}
          value={props.value}
          aria-invalid={props.error ? 'true' : undefined}
          aria-describedby={props.error ? errorId : undefined}
          onInput={(event) => props.onInput(event.currentTarget.value)}
        />{' '}
        <span class="unit">{props.unit}</span>
      </span>
      {props.error ? (
        <p id={errorId} class="field-error">
          {props.error}
        </p>
      ) : null}
    </>
  );
}

/** The choices of an approval, controlled by the decision: which changes, rebase, a rollout. */
export function ApproveOptions(props: {
  run: Run;
  form: ApproveForm;
  errors: FormErrors;
  /** Why a change starts unticked, by change id. */
  why: ReadonlyMap<string, string>;
  onChange: (form: ApproveForm) => void;
}) {
  const { form } = props;
  const set = (next: Partial<ApproveForm>) => props.onChange({ ...form, ...next });
  return (
    <fieldset class="approve-options">
      <legend>What to approve</legend>
      {changesByNumber(props.run).map((change) => {
        const why = props.why.get(change.id);
        return (
          <div key={change.id} class="change-choice">
            <label class="check">
              <input
                type="checkbox"
                name="change"
                checked={form.chosen.has(change.id)}
                aria-describedby={why ? `why-${change.id}` : undefined}
                onChange={(event) => {
                  const chosen = new Set(form.chosen);
                  if (event.currentTarget.checked) chosen.add(change.id);
                  else chosen.delete(change.id);
                  set({ chosen });
                }}
              />{' '}
              Change {change.id} ({change.slotId}): {change.description}
            </label>
            {why ? (
              <p id={`why-${change.id}`} class="muted small change-why">
                Unticked to start with: {why}.
              </p>
            ) : null}
          </div>
        );
      })}
      {props.errors.changes ? <p class="field-error">{props.errors.changes}</p> : null}
      <label class="check">
        <input
          type="checkbox"
          checked={form.rebase}
          onChange={(event) => set({ rebase: event.currentTarget.checked })}
        />{' '}
        Rebase onto the configuration active now, if it moved
      </label>
      <label class="check">
        <input
          type="checkbox"
          checked={form.rollout}
          onChange={(event) => set({ rollout: event.currentTarget.checked })}
        />{' '}
        Roll out to a share of traffic first (unticked: all traffic at once)
      </label>
      {form.rollout ? (
        <div class="rollout-fields">
          <NumberField
            id="rollout-percent"
            label="Share of traffic for the candidate (1–99)"
            unit="%"
            value={form.percent}
            error={props.errors.percent}
            onInput={(percent) => set({ percent })}
          />
          <NumberField
            id="rollout-min-executions"
            label="Candidate executions before a promotion or a step up (30–100,000)"
            unit="executions"
            placeholder={String(DEFAULT_MIN_EXECUTIONS)}
            value={form.minExecutions}
            error={props.errors.minExecutions}
            onInput={(minExecutions) => set({ minExecutions })}
          />
          <label class="check">
            <input
              type="checkbox"
              checked={form.autoPromote}
              onChange={(event) => set({ autoPromote: event.currentTarget.checked })}
            />{' '}
            Promote automatically once its failure rate is shown within 1 percentage point of the base's (it
            is rolled back automatically when shown worse)
          </label>
        </div>
      ) : null}
    </fieldset>
  );
}

/** A decision asks first, saying what it will do; the person confirms or goes back to the form. */
export function DecisionDialog(props: {
  action: 'approve' | 'reject';
  override: boolean;
  children: ComponentChildren;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const reject = props.action === 'reject';
  return (
    <ConfirmDialog
      title={
        reject
          ? 'Reject this proposal?'
          : props.override
            ? 'Approve against the approval rules?'
            : 'Approve these changes?'
      }
      confirmLabel={reject ? 'Reject' : props.override ? 'Approve with override' : 'Approve'}
      danger={reject}
      onConfirm={props.onConfirm}
      onCancel={props.onCancel}
    >
      {props.children}
    </ConfirmDialog>
  );
}

/** An approved run: the changes that shipped and the ones left out, by number. */
export function ShippedChanges({ run }: { run: Run }) {
  const all = changesByNumber(run);
  const approved = new Set(run.approvedChangeIds ?? all.map((change) => change.id));
  const shipped = all.filter((change) => approved.has(change.id));
  const left = all.filter((change) => !approved.has(change.id));
  return (
    <section aria-labelledby="shipped" class="card shipped">
      <h2 id="shipped">What was approved</h2>
      <p>
        {shipped.length === all.length
          ? `Every change shipped (${listWords(all.map((change) => change.id))}).`
          : `Changes ${listWords(shipped.map((change) => change.id))} shipped; ${listWords(left.map((change) => change.id))} ${left.length === 1 ? 'was' : 'were'} left out.`}
      </p>
      <ul aria-label="Shipped changes">
        {shipped.map((change) => (
          <li key={change.id}>
            Change {change.id} ({change.slotId}): {change.description}
          </li>
        ))}
      </ul>
      {left.length > 0 ? (
        <>
          <h3>Left out</h3>
          <ul aria-label="Changes left out">
            {left.map((change) => (
              <li key={change.id}>
                Change {change.id} ({change.slotId}): {change.description}
              </li>
            ))}
          </ul>
        </>
      ) : null}
      {run.approvalOverrideReason ? (
        <p class="small">Approved against the approval rules: {run.approvalOverrideReason}</p>
      ) : null}
    </section>
  );
}
