/**
 * Deleting a pipeline from its page (admins): a dialog that asks for the pipeline's name, then the
 * deletion's receipt, polled until the job completes it with the counts of what it removed.
 */
import { useEffect, useState } from 'preact/hooks';
import type { ResponseBody } from '../../../cli/client.ts';
import { api, client } from '../api.ts';
import { nextPollDelay } from '../poll.ts';
import { Link } from '../router.tsx';
import type { Pipeline } from '../types.ts';
import { ConfirmDialog, ErrorNotice, Time } from '../ui.tsx';

type Receipt = ResponseBody<'get-deletion'>;

export function DeletePipeline({
  pipeline,
  rolloutRunning,
  onDeleted,
}: {
  pipeline: Pipeline;
  /** A rollout is serving a candidate: deleting ends it with the pipeline, and the dialog says so. */
  rolloutRunning: boolean;
  onDeleted: (receipt: Receipt) => void;
}) {
  const [asking, setAsking] = useState(false);
  const [typed, setTyped] = useState('');
  const [error, setError] = useState<unknown>();
  const remove = async () => {
    if (typed !== pipeline.name) return;
    setAsking(false);
    setError(undefined);
    try {
      onDeleted(
        await api(
          client.DELETE('/pipelines/{pipelineId}', { params: { path: { pipelineId: pipeline.id } } }),
        ),
      );
    } catch (caught) {
      setError(caught);
    }
  };
  return (
    <section aria-labelledby="delete-pipeline" class="card">
      <h2 id="delete-pipeline">Delete this pipeline</h2>
      <p class="muted">
        Removes the pipeline with its configurations, history, signals, executions and runs. This cannot be
        undone; export it first to keep a copy.
      </p>
      <button type="button" class="danger" onClick={() => setAsking(true)}>
        Delete pipeline…
      </button>
      <ErrorNotice error={error} />
      {asking ? (
        <ConfirmDialog
          title={`Delete ${pipeline.name}?`}
          confirmLabel="Delete for good"
          danger
          onConfirm={() => void remove()}
          onCancel={() => {
            setAsking(false);
            setTyped('');
          }}
        >
          {rolloutRunning ? (
            <p class="notice notice-warning" role="alert">
              A rollout is running on this pipeline: deleting it ends the rollout, and callers of its serving
              configuration get 404 from now on.
            </p>
          ) : null}
          <label for="confirm-name">
            Type the pipeline's name, <strong>{pipeline.name}</strong>, to confirm
          </label>
          <input
            id="confirm-name"
            autoComplete="off"
            value={typed}
            onInput={(event) => setTyped(event.currentTarget.value)}
          />
          {typed !== '' && typed !== pipeline.name ? (
            <p class="muted small">The name does not match.</p>
          ) : null}
        </ConfirmDialog>
      ) : null}
    </section>
  );
}

/** The receipt of a deletion, polled until it is completed. */
export function DeletionReceipt({ first }: { first: Receipt }) {
  const [receipt, setReceipt] = useState(first);
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    if (receipt.status === 'completed') return;
    let delay: number | undefined;
    let timer: ReturnType<typeof setTimeout>;
    let stopped = false;
    const poll = async () => {
      try {
        const next = await api(client.GET('/deletions/{id}', { params: { path: { id: first.id } } }));
        if (stopped) return;
        setReceipt(next);
        if (next.status === 'completed') return;
      } catch (caught) {
        setError(caught);
      }
      delay = nextPollDelay(delay);
      timer = setTimeout(() => void poll(), delay);
    };
    timer = setTimeout(() => void poll(), nextPollDelay());
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [first.id]);
  const { counts } = receipt;
  return (
    <section aria-labelledby="deletion-receipt" class="card">
      <h2 id="deletion-receipt">Deletion receipt</h2>
      <p>
        Pipeline <code>{receipt.pipelineId}</code>: deletion{' '}
        <strong role="status" aria-label="Deletion status">
          {receipt.status}
        </strong>
        . Requested <Time iso={receipt.requestedAt} />
        {receipt.completedAt ? (
          <>
            , completed <Time iso={receipt.completedAt} />
          </>
        ) : null}
        .
      </p>
      <dl class="receipt-counts">
        {(Object.keys(counts) as Array<keyof typeof counts>).map((name) => (
          <div key={name}>
            <dt>{name}</dt>
            <dd>{counts[name]}</dd>
          </div>
        ))}
      </dl>
      <p class="muted small">
        Receipt <code>{receipt.id}</code> (GET /deletions/{receipt.id}).{' '}
        <Link to="">Back to the pipelines</Link>
      </p>
      <ErrorNotice error={error} />
    </section>
  );
}
