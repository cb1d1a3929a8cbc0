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
  let share = Math.max(1, Math.ceil(limit / sources.length));
  for (let round = 0; round < MAX_MERGE_ROUNDS && taking.length > 0; round++) {
    await Promise.all(taking.map((source) => readPage(db, source, { share, ascending, keyOf, stats })));
    const merged = sorted();
    const open = sources.filter((source) => !source.done);
    // An item is certain once every source still open has read past it.
    const certain = merged.filter((item) =>
      open.every((source) => source.last !== null && !first(source.last, keyOf(item))),
    );
    if (certain.length >= limit || open.length === 0) return merged.slice(0, limit).map(parse);
    const frontier = merged[certain.length];
    taking = open.filter(
      (source) => frontier === undefined || source.last === null || first(source.last, keyOf(frontier)),
    );
    if (taking.length === 0) taking = open;
    share = Math.max(1, Math.ceil((limit - certain.length) / taking.length));
  }
  // Bounded: after the last round, the newest of what was read.
  return sorted().slice(0, limit).map(parse);
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

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
