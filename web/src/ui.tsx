/** Small shared pieces: loading data, showing errors in words, times, a confirmation dialog. */
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from './api.ts';
import { formatTime } from './format.ts';

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

/** Runs `load` when `deps` change; the answer of an outdated call is dropped. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const [round, setRound] = useState(0);
  useEffect(() => {
    let current = true;
    setState((previous) => ({ ...previous, loading: true }));
    load().then(
      (data) => current && setState({ data, loading: false }),
      (error: unknown) => current && setState({ error, loading: false }),
    );
    return () => {
      current = false;
    };
  }, [...deps, round]);
  const reload = useCallback(() => setRound((value) => value + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}

/** An error as a sentence a person can act on; never a stack or a JSON dump. */
export function errorText(error: unknown): string {
  if (error instanceof ApiError) {
    if (error.status === 403) return `You may not do this: ${error.message}`;
    if (error.status === 404) return `Not found: ${error.message}`;
    if (error.status === 429) {
      const wait = error.retryAfterSeconds
        ? ` Try again in ${Math.ceil(error.retryAfterSeconds / 60)} minute(s).`
        : '';
      return `Too many requests.${wait} ${error.message}`;
    }
    if (error.status >= 500)
      return `The server could not do this right now; try again shortly. (${error.message})`;
    return error.message;
  }
  return 'Something went wrong in the page; reload it and try again.';
}

export function ErrorNotice({ error, children }: { error: unknown; children?: ComponentChildren }) {
  if (!error) return null;
  return (
    <div class="notice notice-error" role="alert">
      <p>{errorText(error)}</p>
      {children}
    </div>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="muted" aria-busy="true">
      Loading {what}…
    </p>
  );
}

export function Time({ iso }: { iso: string | null | undefined }) {
  if (!iso) return <span class="muted">—</span>;
  return <time dateTime={iso}>{formatTime(iso)}</time>;
}

/** A person as the API names them (an email, an API token's name), the id on hover; the id when gone. */
export function Person({ name, id }: { name: string | null | undefined; id: string | null }) {
  if (id === null) return <span class="muted">—</span>;
  return name ? <span title={id}>{name}</span> : <code>{id}</code>;
}

/** A modal confirmation: the page behind it is inert until the person answers. */
export function ConfirmDialog(props: {
  title: string;
  confirmLabel: string;
  onConfirm: () => void;
  onCancel: () => void;
  danger?: boolean;
  children?: ComponentChildren;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    dialog.current?.showModal();
  }, []);
  return (
    <dialog
      ref={dialog}
      class="dialog"
      aria-labelledby="confirm-title"
      onCancel={(event) => {
        event.preventDefault();
        props.onCancel();
      }}
    >
      <h2 id="confirm-title">{props.title}</h2>
      {props.children}
      <div class="actions">
        <button type="button" class={props.danger ? 'danger' : 'primary'} onClick={props.onConfirm}>
          {props.confirmLabel}
        </button>
        <button type="button" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </dialog>
  );
}

/** Sets the document title for the page on show. */
export function useTitle(title: string): void {
  useEffect(() => {
    document.title = `${title} · Pipeline Synthesis`;
  }, [title]);
}
