/** The team's pipelines, newest first, a page at a time. */
import { useEffect, useState } from 'preact/hooks';
import { get } from '../api.ts';
import { Link } from '../router.tsx';
import type { Page, Pipeline } from '../types.ts';
import { ErrorNotice, Loading, Time, useTitle } from '../ui.tsx';

export const PAGE_SIZE = 20;

/** A list read page by page through `nextCursor`, with "Load more". */
export function usePagedList<T>(path: string) {
  const [items, setItems] = useState<T[]>([]);
  const [cursor, setCursor] = useState<string | null | undefined>(undefined);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<unknown>();
  const [round, setRound] = useState(0);

  const load = async (after: string | null | undefined, replace: boolean) => {
    setLoading(true);
    setError(undefined);
    try {
      const separator = path.includes('?') ? '&' : '?';
      const query = `${separator}limit=${PAGE_SIZE}${after ? `&cursor=${encodeURIComponent(after)}` : ''}`;
      const page = await get<Page<T>>(`${path}${query}`);
      setItems((previous) => (replace ? page.items : [...previous, ...page.items]));
      setCursor(page.nextCursor);
    } catch (caught) {
      setError(caught);
    } finally {
      setLoading(false);
    }
  };
  useEffect(() => {
    void load(undefined, true);
  }, [path, round]);
  return {
    items,
    loading,
    error,
    hasMore: Boolean(cursor),
    loadMore: () => void load(cursor, false),
    reload: () => setRound((value) => value + 1),
  };
}

export function LoadMore(props: {
  list: { hasMore: boolean; loading: boolean; loadMore: () => void };
  what: string;
}) {
  if (!props.list.hasMore) return null;
  return (
    <button type="button" disabled={props.list.loading} onClick={props.list.loadMore}>
      Load more {props.what}
    </button>
  );
}

export function PipelinesPage() {
  useTitle('Pipelines');
  const list = usePagedList<Pipeline>('pipelines');
  return (
    <>
      <h1>Pipelines</h1>
      <ErrorNotice error={list.error} />
      {list.items.length === 0 && list.loading ? <Loading what="pipelines" /> : null}
      {list.items.length === 0 && !list.loading && !list.error ? (
        <p class="muted">
          This team has no pipelines yet. Create one through the API: <code>POST /pipelines</code>.
        </p>
      ) : null}
      <ul class="cards" aria-label="Pipelines">
        {list.items.map((pipeline) => (
          <li key={pipeline.id} class="card">
            <Link to={`pipelines/${encodeURIComponent(pipeline.id)}`} class="card-title">
              {pipeline.name}
            </Link>
            <p class="muted small">
              Created <Time iso={pipeline.createdAt} /> · <code>{pipeline.id}</code>
            </p>
          </li>
        ))}
      </ul>
      <LoadMore list={list} what="pipelines" />
    </>
  );
}
