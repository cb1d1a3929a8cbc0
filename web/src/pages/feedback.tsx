/**
 * Good / Bad on an execution's page: a person's verdict, with an optional note, recorded as a
 * human_feedback signal citing the execution; below, who said what and when.
 */
import { useState } from 'preact/hooks';
import type { ResponseBody } from '../../../cli/client.ts';
import { api, client } from '../api.ts';
import { useSession } from '../session.ts';
import { ErrorNotice, Time } from '../ui.tsx';

type Signal = ResponseBody<'get-execution'>['signals'][number];

export function ExecutionFeedback(props: {
  pipelineId: string;
  executionId: string;
  signals: Signal[];
  onRecorded: () => void;
}) {
  const { canWrite } = useSession();
  const [note, setNote] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const said = props.signals.filter((signal) => signal.kind === 'human_feedback');
  const rate = async (rating: 'good' | 'bad') => {
    setBusy(true);
    setError(undefined);
    try {
      await api(
        client.POST('/pipelines/{pipelineId}/executions/{executionId}/feedback', {
          params: { path: { pipelineId: props.pipelineId, executionId: props.executionId } },
          body: { rating, ...(note.trim() ? { note: note.trim() } : {}) },
        }),
      );
      setNote('');
      props.onRecorded();
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="feedback" class="card">
      <h2 id="feedback">Was this execution good?</h2>
      {canWrite ? (
        <form class="feedback-form" onSubmit={(event) => event.preventDefault()}>
          <label for="feedback-note">Note (optional)</label>
          <input
            id="feedback-note"
            maxLength={1000}
            value={note}
            placeholder="What was good or wrong"
            onInput={(event) => setNote(event.currentTarget.value)}
          />
          <div class="actions">
            <button type="button" disabled={busy} onClick={() => void rate('good')}>
              Good
            </button>
            <button type="button" disabled={busy} onClick={() => void rate('bad')}>
              Bad
            </button>
          </div>
        </form>
      ) : (
        <p class="muted">Viewers read the feedback; members and admins give it.</p>
      )}
      <ErrorNotice error={error} />
      {said.length === 0 ? (
        <p class="muted">No one has said yet.</p>
      ) : (
        <ul class="feedback-list" aria-label="Feedback given">
          {said.map((signal) => (
            <li key={signal.id}>
              <strong>{signal.value === 1 ? 'Good' : 'Bad'}</strong> — {signal.recordedByName ?? 'someone'} ·{' '}
              <Time iso={signal.occurredAt} />
              {signal.message.includes(': ') ? (
                <q>{signal.message.slice(signal.message.indexOf(': ') + 2)}</q>
              ) : null}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
