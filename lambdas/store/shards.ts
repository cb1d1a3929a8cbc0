/*
 * The newest (or oldest) items across a record's shards (store/keys.ts RECORD_SOURCES): bounded
 * Queries merged in sort-key order, never a Scan, reading about as many items as one partition's
 * Query would (docs/scaling.md, "Merged reads").
 */
import { type DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { isEmptyRange } from './key-ranges.ts';
import {
  estimatedPages,
  type Item,
  type Page,
  type RangeQuery,
  type Source,
  timeOf,
  YEAR_0,
} from './merge-aim.ts';

export type { RangeQuery } from './merge-aim.ts';

/** The share of the items still missing an estimated round of a read of exactly N aims at (estimatedPages). */
const ESTIMATE_AIM = 0.8;

/** The rounds of Queries one merged read makes at most (each round queries its sources in parallel). */
export const MAX_MERGE_ROUNDS = 24;

/** The rounds of a frugal read (more, smaller ones); its last three aim as a plain read's do. */
const MAX_FRUGAL_ROUNDS = 40;

/** What a merged read did, for the bench and the tests that compare items read. */
export interface MergeStats {
  queries: number;
  itemsRead: number;
}

/** How a newest-first read may spend its rounds (newestAcross). */
export interface MergeOptions {
  stats?: MergeStats;
  /**
   * Read as few items past the answer as the rounds allow, at the cost of more rounds: for reads
   * whose items count more than their time (synthesis evidence, an evaluation set). Two sources'
   * newest items first, then every other source down to the newer (items that are all the
   * answer's), and the last items aimed at so that a round rarely finds more than are missing
   * (frugalAim).
   */
  frugal?: boolean;
  /**
   * Once every source is read, the newest key read (the history's newest) gives the read's lower
   * bound (`from`), e.g. an evaluation set's last slice, whose start depends on the newest
   * execution; items read below it are dropped.
   */
  narrow?: (newestKey: string) => string;
  /**
   * With `frugal`: the rate the records are expected at (items a millisecond over every source,
   * e.g. an evaluation set's newest slice's), for reads whose sources share an upper bound `to`
   * (a time): the first round reads every source down to where a quarter of the answer is expected,
   * instead of reading two sources first.
   */
  rate?: number;
}

interface Order extends MergeOptions {
  sortKey: string;
  limit: number;
  ascending: boolean;
}

/** Up to `limit` items of several partitions' Queries, newest (highest `sortKey`) first, merged. */
export function newestAcross<T>(
  db: DynamoDBDocumentClient,
  queries: RangeQuery[],
  sortKey: string,
  limit: number,
  parse: (item: Item) => T,
  options: MergeOptions = {},
): Promise<T[]> {
  return mergeAcross(db, queries, { sortKey, limit, ascending: false, ...options }, parse);
}

/**
 * As newestAcross, in either order (an export reads oldest first, after its cursor). A first round
 * of small pages gives each source's rate; then each source reads down to the time where the answer
 * should end, aimed a little short (its key condition stops there, so nothing past it is read),
 * until the items read down to where every source is read hold the answer.
 */
export async function mergeAcross<T>(
  db: DynamoDBDocumentClient,
  queries: RangeQuery[],
  order: Order,
  parse: (item: Item) => T,
): Promise<T[]> {
  const { complete } = await mergeRounds(db, queries, order, ESTIMATE_AIM);
  return complete.slice(0, order.limit).map(parse);
}

/**
 * As mergeAcross, answering every item read down to where every source is read (at least `limit`
 * when there are so many): what a read that goes on after its last item (an export) can use
 * whole, so no item is read twice. `complete`: nothing is left.
 */
export async function readAcross<T>(
  db: DynamoDBDocumentClient,
  queries: RangeQuery[],
  order: Order,
  parse: (item: Item) => T,
): Promise<{ items: T[]; complete: boolean; frontier: string | null }> {
  // Everything read down to the frontier is answered: an estimate past the end costs nothing.
  const rounds = await mergeRounds(db, queries, order, 1);
  const { complete, exhausted, frontier } = 'bounded' in rounds && rounds.bounded ? rounds.bounded : rounds;
  return { items: complete.map(parse), complete: exhausted, frontier };
}

/**
 * As readAcross, for a read that goes on in each source from where that source stopped (an
 * export's cursor holds every source's position): every item read is answered, in order, so none
 * is read twice; a later read may answer a key before one answered here (from a source read less
 * far). `positions`: per source, the key or bare time up to which it is read (null: to its end).
 */
export async function readOnward(
  db: DynamoDBDocumentClient,
  queries: RangeQuery[],
  order: Order,
): Promise<{ items: Item[]; positions: Array<string | null>; complete: boolean }> {
  const { sources } = await mergeRounds(db, queries, order, 1);
  const keyOf = (item: Item) => String(item[order.sortKey] ?? '');
  const items = sources
    .flatMap((source) => source.items)
    .sort((a, b) => compare(keyOf(a), keyOf(b)) * (order.ascending ? 1 : -1));
  const positions = sources.map((source) => (source.exhausted ? null : source.last));
  return { items, positions, complete: sources.every((source) => source.exhausted) };
}

/**
 * The rounds of a merged read (see mergeAcross): the items read down to where every source is read
 * (in the read's order), and whether every source is read to its end.
 */
async function mergeRounds(db: DynamoDBDocumentClient, queries: RangeQuery[], order: Order, aim: number) {
  const { sortKey, limit, ascending } = order;
  const sources: Source[] = queries.map((query) => ({
    query,
    items: [],
    last: null,
    start: undefined,
    exhausted: false,
  }));
  const keyOf = (item: Item) => String(item[sortKey] ?? '');
  const sorted = () =>
    sources
      .flatMap((source) => source.items)
      .sort((a, b) => compare(keyOf(a), keyOf(b)) * (ascending ? 1 : -1));
  const maxRounds = order.frugal ? MAX_FRUGAL_ROUNDS : MAX_MERGE_ROUNDS;
  let round = 0;
  let pages = await openingPages(db, sources, { ...order, keyOf });
  if (pages.size < sources.length) round++;
  let narrow = order.narrow;
  // The last round's items down to where every source is read, kept for a read that runs out of rounds.
  let done: { complete: Item[]; exhausted: boolean; frontier: string | null; sources: Source[] } | null =
    null;
  // Rounds in a row that found nothing up to their estimate.
  let stalls = 0;
  for (; round < maxRounds && pages.size > 0; round++) {
    const before = sources.reduce((sum, source) => sum + source.items.length, 0);
    await Promise.all([...pages].map(([source, page]) => readPage(db, source, page, { ...order, keyOf })));
    const newest = narrow ? sorted()[0] : undefined;
    if (narrow && newest) {
      // Every source is read now: the newest key read is the history's newest.
      narrowTo(sources, narrow(keyOf(newest)), keyOf);
    }
    narrow = undefined;
    const merged = sorted();
    const open = sources.filter((source) => !source.exhausted);
    // Every open source is read down to the frontier (the least read of them): what lies before it is complete.
    const lasts = open.map((source) => source.last as string).sort();
    const frontier = ascending ? lasts[0] : lasts.at(-1);
    const complete =
      frontier === undefined
        ? merged
        : merged.filter((item) => (ascending ? keyOf(item) <= frontier : keyOf(item) >= frontier));
    done = { complete, exhausted: frontier === undefined, frontier: frontier ?? null, sources };
    if (frontier === undefined || complete.length >= limit) return done;
    stalls = merged.length === before ? stalls + 1 : 0;
    pages = estimatedPages(open, merged.map(keyOf), complete.length, {
      limit,
      ascending,
      stalls,
      aim,
      // A frugal read's last three rounds aim as a plain read's do, so it ends with the answer whole.
      frugal: order.frugal === true && round < maxRounds - 3,
    });
  }
  // Bounded: after the last round, the first of what was read; `bounded`: what was read down to
  // where every source is read (a read going on from its frontier then misses nothing).
  return { complete: sorted(), exhausted: false, frontier: null, sources, bounded: done };
}

/**
 * The first round's pages: half an even share a source (a source rarely holds fewer of the answer
 * than that). A frugal read first reads two sources' newest items alone, then every other source
 * down to the newer of them: every item of that round is among the newest (about half an item a
 * source), none past the answer, and their times give the rate for the next rounds. (One source's
 * newest item lies past the newest 100 in one read of 23; the newer of two, in one of 500.) The
 * pilots are the last sources (shards: the legacy partition, first, holds only older records).
 */
async function openingPages(
  db: DynamoDBDocumentClient,
  sources: Source[],
  order: Order & { keyOf: (item: Item) => string },
): Promise<Map<Source, Page>> {
  const opening = Math.max(1, Math.floor(order.limit / sources.length / 2));
  const share = Math.max(2, Math.ceil((2 * order.limit) / sources.length));
  const top = timeOf(sources[0]?.query.to ?? '');
  if (order.frugal && order.rate && order.rate > 0 && !order.ascending && Number.isFinite(top)) {
    // Down to where a quarter of the answer is expected: all of it the answer's, unless the
    // records are four times denser here than the rate says.
    const until = new Date(Math.max(top - order.limit / 4 / order.rate, YEAR_0)).toISOString();
    return new Map(sources.map((source) => [source, { share, until, estimated: true }]));
  }
  const pilots = order.frugal && !order.ascending && sources.length > 2 ? sources.slice(-2) : [];
  await Promise.all(
    pilots.map((pilot) => readPage(db, pilot, { share: 1, until: null, estimated: false }, order)),
  );
  const newest = pilots
    .flatMap((pilot) => pilot.items.slice(0, 1).map(order.keyOf))
    .sort()
    .at(-1);
  return new Map(
    sources
      .filter((source) => !pilots.includes(source))
      .map((source) => [
        source,
        newest === undefined
          ? { share: opening, until: null, estimated: false }
          : { share, until: newest, estimated: true },
      ]),
  );
}

/**
 * A newest-first read's lower bound raised to `bound` once every source is read (MergeOptions
 * narrow): items below it are dropped, and a source read past it is read whole.
 */
function narrowTo(sources: Source[], bound: string, keyOf: (item: Item) => string) {
  for (const source of sources) {
    const { from } = source.query;
    if (from === undefined || from < bound) source.query = { ...source.query, from: bound };
    source.items = source.items.filter((item) => keyOf(item) >= bound);
    if (source.last !== null && source.last < bound) source.exhausted = true;
  }
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

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
  else if (page.until !== null) source.last = page.until;
  // Read to its end: every item of it is read.
  else source.exhausted = true;
}
