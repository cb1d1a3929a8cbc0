/*
 * The newest items across a record's shards (store/keys.ts RECORD_SOURCES): bounded Queries merged
 * in sort-key order, with page sizes that adapt to where the newest items are, so a reader reads
 * about as many items as one partition's Query would, never a Scan.
 */
import { type DynamoDBDocumentClient, QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';

type Item = Record<string, unknown>;

/** The rounds of Queries one merged read makes at most (each round queries its sources in parallel). */
export const MAX_MERGE_ROUNDS = 24;

interface Source {
  input: QueryCommandInput;
  items: Item[];
  /** The sort key of the last item read (or of LastEvaluatedKey): everything unread sorts below it. */
  last: string | null;
  start: Item | undefined;
  done: boolean;
}

/** What a merged read did, for the bench and the tests that compare items read. */
export interface MergeStats {
  queries: number;
  itemsRead: number;
}

/**
 * Up to `limit` items of several partitions' Queries, newest (highest `sortKey`) first, merged.
 * Each round reads from the sources that can still hold one of the newest `limit`, each a share of
 * what is missing; an item is taken once no unread item of any source can sort above it.
 */
export function newestAcross<T>(
  db: DynamoDBDocumentClient,
  inputs: QueryCommandInput[],
  sortKey: string,
  limit: number,
  parse: (item: Item) => T,
  stats?: MergeStats,
): Promise<T[]> {
  return mergeAcross(db, inputs, { sortKey, limit, ascending: false, stats }, parse);
}

/** As newestAcross, in either order (an export reads oldest first, after its cursor). */
export async function mergeAcross<T>(
  db: DynamoDBDocumentClient,
  inputs: QueryCommandInput[],
  order: { sortKey: string; limit: number; ascending: boolean; stats?: MergeStats },
  parse: (item: Item) => T,
): Promise<T[]> {
  const { sortKey, limit, ascending, stats } = order;
  const sources: Source[] = inputs.map((input) => ({
    input,
    items: [],
    last: null,
    start: undefined,
    done: false,
  }));
  const keyOf = (item: Item) => String(item[sortKey] ?? '');
  // `before(a, b)`: a comes first in the answer's order.
  const first = (a: string, b: string) => (ascending ? a < b : a > b);
  const sorted = () =>
    sources
      .flatMap((source) => source.items)
      .sort((a, b) => compare(keyOf(a), keyOf(b)) * (ascending ? 1 : -1));
  let taking = sources;
  let shares = new Map<Source, number>(sources.map((source) => [source, Math.ceil(limit / sources.length)]));
  for (let round = 0; round < MAX_MERGE_ROUNDS && taking.length > 0; round++) {
    await Promise.all(
      taking.map((source) =>
        readPage(db, source, { share: shares.get(source) ?? 1, ascending, keyOf, stats }),
      ),
    );
    const merged = sorted();
    // The limit-th item read so far: an unread item after it can never be in the answer.
    const bound = merged.length >= limit ? keyOf(merged[limit - 1] as Item) : null;
    taking = sources.filter(
      (source) => !source.done && (bound === null || source.last === null || first(source.last, bound)),
    );
    if (taking.length === 0) return merged.slice(0, limit).map(parse);
    shares = sharesOf(taking, sources, bound, { first, keyOf, read: merged.length });
  }
  // Bounded: after the last round, the newest of what was read.
  return sorted().slice(0, limit).map(parse);
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * How many items each source still open has to read, estimated from the sources already past the
 * bound: their items between the source's last key and the bound, per source, plus one.
 */
function sharesOf(
  open: Source[],
  sources: Source[],
  bound: string | null,
  order: { first: (a: string, b: string) => boolean; keyOf: (item: Item) => string; read: number },
): Map<Source, number> {
  const { first, keyOf } = order;
  const even = Math.max(1, Math.ceil(order.read / sources.length));
  const past =
    bound === null
      ? []
      : sources.filter((other) => other.done || (other.last !== null && !first(other.last, bound)));
  const pastKeys = past.flatMap((other) => other.items.map(keyOf));
  return new Map(
    open.map((source) => {
      const last = source.last;
      if (bound === null || last === null || past.length === 0) return [source, even];
      const between = pastKeys.filter((key) => first(last, key) && !first(bound, key)).length;
      return [source, Math.max(1, Math.ceil(between / past.length) + 1)];
    }),
  );
}

async function readPage(
  db: DynamoDBDocumentClient,
  source: Source,
  page: { share: number; ascending: boolean; keyOf: (item: Item) => string; stats?: MergeStats },
) {
  const { keyOf, stats } = page;
  const { Items = [], LastEvaluatedKey } = await db.send(
    new QueryCommand({
      ...source.input,
      ScanIndexForward: page.ascending,
      Limit: page.share,
      ...(source.start ? { ExclusiveStartKey: source.start } : {}),
    }),
  );
  if (stats) {
    stats.queries++;
    stats.itemsRead += Items.length;
  }
  source.items.push(...Items);
  source.start = LastEvaluatedKey;
  source.done = LastEvaluatedKey === undefined;
  if (LastEvaluatedKey) source.last = keyOf(LastEvaluatedKey);
}
