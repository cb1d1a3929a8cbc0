/*
 * Reading a pipeline's executions and signals back (core/ports/record-reads.ts): a merged read of
 * every shard of their time-ordered partition (store/shards.ts), newest first, the window's lower
 * bound in the key condition and the filters applied by DynamoDB; a page's cursor holds where every
 * shard is read (one sort key: everything newer is read in all of them).
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { RecordReads } from '../core/ports/record-reads.ts';
import { executionSchema, signalSchema } from '../core/schemas/records.ts';
import { decodeCursor, encodeCursor } from './cursor.ts';
import { itemReader } from './items.ts';
import { executionsPartition, RECORD_SOURCES, type Shard, signalsPartition } from './keys.ts';
import { recordById } from './records.ts';
import { type RangeQuery, readAcross } from './shards.ts';

type Filters = Record<string, string | undefined>;

/** A listing's range: its sharded partition and the sort-key bounds of the window (inclusive). */
interface Listing {
  partition: (shard: Shard) => string;
  from: string;
  to?: string | undefined;
}

/** The sources of one page: every shard, bounded by the window and, after a cursor, below its key. */
function queriesOf(tableName: string, listing: Listing, filters: Filters, below: string | undefined) {
  const set = Object.entries(filters).filter((entry): entry is [string, string] => entry[1] !== undefined);
  const to = below !== undefined && (listing.to === undefined || below < listing.to) ? below : listing.to;
  return RECORD_SOURCES.map(
    (shard): RangeQuery => ({
      base: {
        TableName: tableName,
        ExpressionAttributeValues: {
          ':pk': listing.partition(shard),
          ...Object.fromEntries(set.map(([name, value]) => [`:${name}`, value])),
        },
        ...(set.length > 0
          ? {
              FilterExpression: set.map(([name]) => `#${name} = :${name}`).join(' AND '),
              ExpressionAttributeNames: Object.fromEntries(set.map(([name]) => [`#${name}`, name])),
            }
          : {}),
      },
      partition: 'pk = :pk',
      from: listing.from,
      ...(to !== undefined ? { to } : {}),
    }),
  );
}

async function readPage<T>(
  db: DynamoDBDocumentClient,
  tableName: string,
  listing: Listing,
  filters: Filters,
  page: { limit: number; cursor?: string | undefined },
  parse: (item: unknown) => T,
) {
  // The cursor names the listing's legacy partition: one of another pipeline or listing is a 400.
  const identity = listing.partition(null);
  const below = decodeCursor(page.cursor, {
    attributes: ['pk', 'sk'],
    partition: { name: 'pk', value: identity },
  })?.sk;
  // `to` is inclusive: the cursor's own item (the last one answered) is read again and dropped, so
  // it is not counted among the page and the one item past it that says whether more follow.
  const { items, complete, frontier } = await readAcross(
    db,
    queriesOf(tableName, listing, filters, below),
    { sortKey: 'sk', limit: page.limit + (below === undefined ? 1 : 2), ascending: false },
    (item) => item,
  );
  const fresh = below === undefined ? items : items.filter((item) => item.sk !== below);
  const answered = fresh.slice(0, page.limit);
  // A full page ends at its last item; one cut short by the read's rounds at its frontier (where
  // every shard is read: nothing newer is left unread in any of them).
  const end = fresh.length > page.limit ? answered.at(-1)?.sk : complete ? undefined : frontier;
  return {
    items: answered.map(parse),
    nextCursor: typeof end === 'string' ? encodeCursor({ pk: identity, sk: end }) : null,
  };
}

export function makeRecordReads(db: DynamoDBDocumentClient, tableName: string): RecordReads {
  const execution = itemReader(executionSchema, 'execution');
  const signal = itemReader(signalSchema, 'signal');
  return {
    listExecutions: (pipelineId, { since, ...filters }, page) =>
      readPage(
        db,
        tableName,
        { partition: (shard) => executionsPartition(pipelineId, shard), from: since },
        filters,
        page,
        execution,
      ),
    listSignals: (pipelineId, { since, until, ...filters }, page) =>
      readPage(
        db,
        tableName,
        { partition: (shard) => signalsPartition(pipelineId, shard), from: since, to: until && `${until}~` },
        filters,
        page,
        signal,
      ),
    async getExecution(pipelineId, executionId, since) {
      const found = await recordById({ db, tableName }, 'execution', pipelineId, executionId);
      if (!found || typeof found.startedAt !== 'string' || found.startedAt < since) return null;
      return execution(found);
    },
  };
}
