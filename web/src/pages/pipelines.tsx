/** The team's pipelines, newest first, a page at a time. */
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, client } from '../api.ts';
import { Link } from '../router.tsx';
import { ErrorNotice, Loading, Time, useTitle } from '../ui.tsx';
import { PipelineStateLine } from './pipeline-state.tsx';

export const PAGE_SIZE = 20;

/** What a list page is asked for: a page size, and where the previous page ended. */
export interface PageQuery {
  limit: number;
  cursor?: string;
}

interface ListPage<Item> {
  items: Item[];
  nextCursor: string | null;
}

export interface PagedList<Item> {
  items: Item[];
  loading: boolean;
  error: unknown;
  hasMore: boolean;
  loadMore: () => void;
  reload: () => void;
}

/**
 * A list read page by page through `nextCursor`, with "Load more". `loadPage` is a typed-client
 * call; `key` names what it reads (the list starts over when it changes).
 */
export function usePagedList<Item>(
  loadPage: (query: PageQuery) => Promise<ListPage<Item>>,
  key: string,
): PagedList<Item> {
  const [items, setItems] = useState<Item[]>([]);
  const [cursor, setCursor] = useState<string | null | undefined>(undefined);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<unknown>();
  const [round, setRound] = useState(0);

  const load = async (after: string | null | undefined, replace: boolean) => {
    setLoading(true);
    setError(undefined);
    try {
      const page = await loadPage(after ? { limit: PAGE_SIZE, cursor: after } : { limit: PAGE_SIZE });
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
  }, [key, round]);
  return {
    items,
    loading,
    error,
    hasMore: Boolean(cursor),
    loadMore: () => void load(cursor, false),
    reload: () => setRound((value) => value + 1),
  };
}

/**
 * Removing an item of a paged list once the person confirms it: `asking` is the item a dialog asks
 * about; `confirm` removes it, then reloads the list, or hands the error to `onError`.
 */
export function useConfirmedRemoval<Item>(
  list: Pick<PagedList<Item>, 'reload'>,
  remove: (item: Item) => Promise<unknown>,
  onError: (error: unknown) => void,
) {
  const [asking, setAsking] = useState<Item>();
  return {
    asking,
    ask: (item: Item) => setAsking(item),
    cancel: () => setAsking(undefined),
    confirm: async (item: Item) => {
      setAsking(undefined);
      onError(undefined);
      try {
        await remove(item);
        list.reload();
      } catch (caught) {
        onError(caught);
      }
    },
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

/**
 * A paged list's body: "Loading …" until its first page answers, `empty` once it has loaded
 * nothing, `children` of its items while it has some, and "Load more" while there are more.
 */
export function PagedItems<Item>(props: {
  list: PagedList<Item>;
  empty: ComponentChildren;
  what: string;
  children: (items: Item[]) => ComponentChildren;
}) {
  const { list } = props;
  return (
    <>
      {list.items.length === 0 && list.loading ? <Loading what={props.what} /> : null}
      {list.items.length === 0 && !list.loading ? <p class="muted">{props.empty}</p> : null}
      {list.items.length > 0 ? props.children(list.items) : null}
      <LoadMore list={list} what={props.what} />
    </>
  );
}

export function PipelinesPage() {
  useTitle('Pipelines');
  const list = usePagedList((query) => api(client.GET('/pipelines', { params: { query } })), 'pipelines');
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
            <PipelineStateLine pipeline={pipeline} />
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
