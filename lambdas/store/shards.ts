/*
 * The newest (or oldest) items across a record's shards (store/keys.ts RECORD_SOURCES): bounded
 * Queries merged in sort-key order, never a Scan, reading about as many items as one partition's
 * Query would (docs/scaling.md, "Merged reads").
 */
import { type DynamoDBDocumentClient, QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { isEmptyRange } from './key-ranges.ts';

type Item = Record<string, unknown>;

/** The rounds of Queries one merged read makes at most (each round queries its sources in parallel). */
export const MAX_MERGE_ROUNDS = 24;

/**
 * One source of a merged read: its Query without the key condition, its partition's condition and
 * the sort key's bounds (`from`/`to` inclusive, `after` exclusive, in key order whatever the read's).
 * Sort keys start with an ISO time (`<time>#<id>`), which the estimates below read.
 */
export interface RangeQuery {
  base: Omit<QueryCommandInput, 'KeyConditionExpression'>;
  /** The partition's condition, e.g. `pk = :pk` (its values in base.ExpressionAttributeValues). */
  partition: string;
  from?: string;
  after?: string;
  to?: string;
}

interface Source {
  query: RangeQuery;
  items: Item[];
  /** Everything of this source before `last` (in the read's order) is read. */
  last: string | null;
  /** LastEvaluatedKey, when the last page stopped at its Limit (else `last` is a bare time). */
  start: Item | undefined;
  done: boolean;
  /** Every item of this source up to this key or bare time (in the read's order) is read. */
  reached: string | null;
  /** Read to the end of its range: every item of it is read. */
  exhausted: boolean;
}

/** What a merged read did, for the bench and the tests that compare items read. */
export interface MergeStats {
  queries: number;
  itemsRead: number;
}

interface Order {
  sortKey: string;
  limit: number;
  ascending: boolean;
  stats?: MergeStats;
}

/** A round's page of one source: at most `share` items, down to `until` (a key or bare time) if given. */
interface Page {
  share: number;
  until: string | null;
  /** `until` is an estimate: reaching it does not end the source. */
  estimated: boolean;
}

/** Up to `limit` items of several partitions' Queries, newest (highest `sortKey`) first, merged. */
export function newestAcross<T>(
  db: DynamoDBDocumentClient,
  queries: RangeQuery[],
  sortKey: string,
  limit: number,
  parse: (item: Item) => T,
  stats?: MergeStats,
): Promise<T[]> {
  return mergeAcross(db, queries, { sortKey, limit, ascending: false, ...(stats ? { stats } : {}) }, parse);
}

/**
 * As newestAcross, in either order (an export reads oldest first, after its cursor). A first round
 * of small pages gives each source's rate; then each source reads down to the time where the answer
 * should end (its key condition stops there, so nothing past it is read), and once `limit` items
 * are read, the limit-th is the bound: only sources not yet past it read on, down to it.
 */
export async function mergeAcross<T>(
  db: DynamoDBDocumentClient,
  queries: RangeQuery[],
  order: Order,
  parse: (item: Item) => T,
): Promise<T[]> {
  const { merged } = await mergeRounds(db, queries, order);
  return merged.slice(0, order.limit).map(parse);
}

/**
 * As mergeAcross, answering every item read up to where every source has been read (at least
 * `limit` when there are so many): what a read that goes on after its last item (an export) can
 * use whole, so the items read past the limit-th are not read again. `complete`: nothing is left.
 */
export async function readAcross<T>(
  db: DynamoDBDocumentClient,
  queries: RangeQuery[],
  order: Order,
  parse: (item: Item) => T,
): Promise<{ items: T[]; complete: boolean }> {
  const { sources, merged, keyOf } = await mergeRounds(db, queries, order);
  const open = sources.filter((source) => !source.exhausted);
  if (open.length === 0) return { items: merged.map(parse), complete: true };
  const reached = open.map((source) => source.reached);
  if (reached.some((key) => key === null))
    return { items: merged.slice(0, order.limit).map(parse), complete: false };
  const keys = (reached as string[]).sort();
  const frontier = (order.ascending ? keys[0] : keys.at(-1)) as string;
  const within = merged.filter((item) =>
    order.ascending ? keyOf(item) <= frontier : keyOf(item) >= frontier,
  );
  // Never less than the limit-th item (every source is read to it): a read always moves on.
  const items = within.length >= Math.min(order.limit, merged.length) ? within : merged.slice(0, order.limit);
  return { items: items.map(parse), complete: false };
}

/** The rounds of a merged read (see mergeAcross): its sources as read, and their items in order. */
async function mergeRounds(db: DynamoDBDocumentClient, queries: RangeQuery[], order: Order) {
  const { sortKey, limit, ascending } = order;
  const sources: Source[] = queries.map((query) => ({
    query,
    items: [],
    last: null,
    start: undefined,
    done: false,
    reached: null,
    exhausted: false,
  }));
  const keyOf = (item: Item) => String(item[sortKey] ?? '');
  const first = (a: string, b: string) => (ascending ? a < b : a > b);
  const sorted = () =>
    sources
      .flatMap((source) => source.items)
      .sort((a, b) => compare(keyOf(a), keyOf(b)) * (ascending ? 1 : -1));
  // Half an even share first: a source rarely holds fewer of the answer than that.
  const opening = Math.max(1, Math.floor(limit / sources.length / 2));
  let pages = new Map<Source, Page>(
    sources.map((source) => [source, { share: opening, until: null, estimated: false }]),
  );
  for (let round = 0; round < MAX_MERGE_ROUNDS && pages.size > 0; round++) {
    const before = sources.reduce((sum, source) => sum + source.items.length, 0);
    await Promise.all([...pages].map(([source, page]) => readPage(db, source, page, { ...order, keyOf })));
    const merged = sorted();
    const bound = merged.length >= limit ? keyOf(merged[limit - 1] as Item) : null;
    const open = sources.filter(
      (source) => !source.done && (bound === null || source.last === null || first(source.last, bound)),
    );
    if (open.length === 0) return { sources, merged, keyOf };
    pages =
      bound === null
        ? estimatedPages(open, merged.map(keyOf), limit - merged.length, {
            ascending,
            stalled: merged.length === before,
          })
        : boundedPages(open, Math.max(1, Math.ceil(limit / sources.length)), bound);
  }
  // Bounded: after the last round, the first of what was read.
  return { sources, merged: sorted(), keyOf };
}

/** Once `limit` items are read: the open sources read on down to the limit-th item's key, inclusive. */
const boundedPages = (open: Source[], share: number, bound: string) =>
  new Map<Source, Page>(open.map((source) => [source, { share, until: bound, estimated: false }]));

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

const YEAR_0 = Date.parse('0000-01-01T00:00:00.000Z');
const YEAR_9999 = Date.parse('9999-12-31T23:59:59.999Z');

/** The time a sort key starts with, in ms (NaN when it does not start with an ISO time). */
const timeOf = (key: string) => Date.parse(key.slice(0, 24));

/**
 * Before `limit` items are read: the time where the `missing` items still to read should end,
 * from the rate the sources were read at so far (the ids' hash spreads the records evenly over
 * the sources), and each open source's page down to it. Keys without a time, or a round that found
 * nothing: an even share each, to the sources' ends.
 */
function estimatedPages(
  open: Source[],
  keys: string[],
  missing: number,
  { ascending, stalled }: { ascending: boolean; stalled: boolean },
): Map<Source, Page> {
  const even = (): Map<Source, Page> =>
    new Map(
      open.map((source) => [
        source,
        { share: Math.max(1, Math.ceil(missing / open.length)), until: null, estimated: false },
      ]),
    );
  const times = keys.map(timeOf);
  const lasts = open.map((source) => timeOf(source.last ?? ''));
  // A round that found nothing up to its estimate: the sources are read to their ends instead.
  if (stalled || times.length === 0 || [...times, ...lasts].some(Number.isNaN)) return even();
  // Where the read started (the newest or oldest time read), and each source's distance from it.
  const origin = ascending ? Math.min(...times) : Math.max(...times);
  const spans = lasts.map((last) => Math.max(1, Math.abs(origin - last)));
  const rate =
    open.reduce((sum, source) => sum + source.items.length, 0) / spans.reduce((sum, span) => sum + span, 0);
  if (!(rate > 0)) return even();
  // Items expected from every open source between its last key and the time `at`.
  const expected = (at: number) =>
    lasts.reduce((sum, last) => sum + rate * Math.max(0, ascending ? at - last : last - at), 0);
  let near = ascending ? Math.min(...lasts) : Math.max(...lasts);
  let far = ascending ? near + missing / rate + 1 : near - missing / rate - 1;
  for (let step = 0; step < 40; step++) {
    const middle = (near + far) / 2;
    if (expected(middle) < missing) near = middle;
    else far = middle;
  }
  // Within four-digit years: a time outside them does not sort among ISO keys (`+010000-…` < `2026-…`).
  const until = new Date(Math.min(Math.max(Math.round(far), YEAR_0), YEAR_9999)).toISOString();
  const pages = new Map<Source, Page>();
  open.forEach((source, index) => {
    const last = lasts[index] as number;
    const share = Math.ceil(rate * Math.abs(far - last) * 2) + 2;
    if (ascending ? last < far : last > far) pages.set(source, { share, until, estimated: true });
  });
  return pages.size > 0 ? pages : even();
}

/**
 * The key condition of a source's page: its own bounds, the far end narrowed to `until`, the near
 * end at a bare time it was read to (a page that stopped at its Limit goes on from its start key).
 * An exclusive `after` is asked inclusively beside an upper bound (DynamoDB has no "> AND <="): an
 * item at it is dropped; alone it is asked with ">".
 */
function keyCondition(source: Source, until: string | null, ascending: boolean, sortKey: string) {
  const { from, after, to } = source.query;
  const max = (a: string | undefined, b: string | undefined) =>
    a === undefined || (b !== undefined && b > a) ? b : a;
  const min = (a: string | undefined, b: string | undefined) =>
    a === undefined || (b !== undefined && b < a) ? b : a;
  // A bare time `last` (read to an estimate): no key equals it, so inclusive is exact.
  const reached = source.start === undefined && source.last !== null ? source.last : undefined;
  const far = until ?? undefined;
  const lower = max(max(from, after), ascending ? reached : far);
  const upper = min(to, ascending ? far : reached);
  const values: Record<string, string> = {};
  if (lower !== undefined) values[':mergeLo'] = lower;
  if (upper !== undefined) values[':mergeHi'] = upper;
  const range =
    lower !== undefined && upper !== undefined
      ? ' AND #mergeSk BETWEEN :mergeLo AND :mergeHi'
      : lower !== undefined
        ? // The exclusive `after` alone is asked as such: its item is not read again.
          ` AND #mergeSk ${lower === after ? '>' : '>='} :mergeLo`
        : upper !== undefined
          ? ' AND #mergeSk <= :mergeHi'
          : '';
  return {
    expression: `${source.query.partition}${range}`,
    values,
    names: range ? { '#mergeSk': sortKey } : ({} as Record<string, string>),
    empty: lower !== undefined && upper !== undefined && isEmptyRange(lower, upper),
  };
}

async function readPage(
  db: DynamoDBDocumentClient,
  source: Source,
  page: Page,
  order: Order & { keyOf: (item: Item) => string },
) {
  const { keyOf, stats, ascending } = order;
  const condition = keyCondition(source, page.until, ascending, order.sortKey);
  // Read past its own bounds already: nothing more to read.
  if (condition.empty) {
    source.done = true;
    source.exhausted = true;
    return;
  }
  const { base } = source.query;
  const {
    Items = [],
    LastEvaluatedKey,
    ScannedCount,
  } = await db.send(
    new QueryCommand({
      ...base,
      KeyConditionExpression: condition.expression,
      ExpressionAttributeValues: { ...base.ExpressionAttributeValues, ...condition.values },
      ...(Object.keys(condition.names).length > 0 || base.ExpressionAttributeNames
        ? { ExpressionAttributeNames: { ...base.ExpressionAttributeNames, ...condition.names } }
        : {}),
      ScanIndexForward: ascending,
      Limit: page.share,
      ...(source.start ? { ExclusiveStartKey: source.start } : {}),
    }),
  );
  if (stats) {
    stats.queries++;
    stats.itemsRead += ScannedCount ?? Items.length;
  }
  const after = source.query.after;
  source.items.push(...(after === undefined ? Items : Items.filter((item) => keyOf(item) !== after)));
  source.start = LastEvaluatedKey;
  if (LastEvaluatedKey) source.last = keyOf(LastEvaluatedKey);
  else if (page.estimated && page.until !== null) source.last = page.until;
  // Read to its end (or to the answer's bound): nothing more of this source can enter the answer.
  else source.done = true;
  if (LastEvaluatedKey) source.reached = source.last;
  else if (page.until !== null) source.reached = page.until;
  else source.exhausted = true;
}
