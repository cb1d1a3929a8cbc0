/*
 * A pipeline's series in the data table (keys: store/series-keys.ts).
 *
 * Written with the recording (store/series-writes.ts): each transaction of records adds its records' counters (core/series.ts)
 * to the buckets of one shard of SERIES_SHARDS (the batch's), so no key takes more than an eighth
 * of a pipeline's batches, and a batch stored once is counted once.
 *
 * Read by period (an hour of minutes, a day of hours): a period that ended a while ago is read from
 * its pack, one item merged from the shards by the first read after it ended and kept; the recent
 * periods (and one a late record changed since its pack) are read from the shards. A day of minutes
 * is then one Query of the packs and one of each shard, whatever the traffic.
 */
import {
  BatchGetCommand,
  BatchWriteCommand,
  type DynamoDBDocumentClient,
  QueryCommand,
} from '@aws-sdk/lib-dynamodb';
import { expiryEpoch, RETENTION_DAYS } from '../core/lifecycle.ts';
import type { SeriesRead, SeriesReadStats, SeriesReads } from '../core/ports/series.ts';
import { type Bucket, bucketOf, type Counters, type Grain, mergeCounters, STEP_MS } from '../core/series.ts';
import { SERIES_SHARDS, seriesPackPartition, seriesPartition } from './series-keys.ts';
import { PERIOD_MS, periodStart, WRITE_MS } from './series-writes.ts';

/** A period is packed once it ended this long ago: every write started in time is visible then. */
export const SETTLE_MS = 2 * WRITE_MS;

const periodsFrom = (first: number, last: number, size: number) =>
  Array.from({ length: Math.floor((last - first) / size) + 1 }, (_, i) => first + i * size);

/** One Query a shard over the span of `periods` (none for no period). */
async function readShards(
  table: Table,
  pipelineId: string,
  grain: Grain,
  periods: number[],
  stats: SeriesReadStats,
): Promise<Record<string, unknown>[]> {
  const [oldest, newest] = [periods[0], periods.at(-1)];
  if (oldest === undefined || newest === undefined) return [];
  const iso = (ms: number) => new Date(ms).toISOString();
  const read = await Promise.all(
    Array.from({ length: SERIES_SHARDS }, (_, shard) =>
      queryAll(
        table,
        {
          pk: seriesPartition(pipelineId, grain, shard),
          from: iso(oldest),
          to: `${iso(newest + PERIOD_MS[grain] - 1)}#~`,
        },
        stats,
      ),
    ),
  );
  return read.flat();
}

/**
 * Packs' buckets by pack (its key and time read): a pack never changes once written (a newer one
 * has another packedAt), so an environment keeps the ones it read, up to PACKS_KEPT.
 */
const packCache = new Map<string, Record<string, Record<string, unknown>>>();
const PACKS_KEPT = 2_000;
const cacheKeyOf = (pk: string, item: Record<string, unknown>) =>
  `${pk}|${String(item.sk)}|${String(item.packedAt)}`;

function keepPack(
  pk: string,
  item: Record<string, unknown>,
  buckets: Record<string, Record<string, unknown>>,
) {
  if (packCache.size >= PACKS_KEPT) packCache.delete(packCache.keys().next().value as string);
  packCache.set(cacheKeyOf(pk, item), buckets);
}

async function packedBuckets(
  { db, tableName }: Table,
  pk: string,
  packs: Record<string, unknown>[],
  stats: SeriesReadStats,
): Promise<Array<[Record<string, unknown>, Record<string, Record<string, unknown>>]>> {
  const cacheKey = (item: Record<string, unknown>) => cacheKeyOf(pk, item);
  const missing = packs.filter((item) => !packCache.has(cacheKey(item)));
  for (let i = 0; i < missing.length; i += 100) {
    let keys = missing.slice(i, i + 100).map((item) => ({ pk, sk: String(item.sk) }));
    for (let attempt = 0; keys.length > 0 && attempt < 5; attempt++) {
      stats.queries++;
      const answer = await db.send(
        new BatchGetCommand({
          RequestItems: {
            [tableName]: { Keys: keys, ProjectionExpression: 'sk, packedAt, b', ConsistentRead: true },
          },
        }),
      );
      for (const item of answer.Responses?.[tableName] ?? []) {
        stats.itemsRead++;
        keepPack(pk, item, unpack(item.b));
      }
      keys = (answer.UnprocessedKeys?.[tableName]?.Keys ?? []) as typeof keys;
    }
  }
  return packs.map((item) => [item, packCache.get(cacheKey(item)) ?? {}]);
}

/* ---- reading ---- */

interface Table {
  db: DynamoDBDocumentClient;
  tableName: string;
}

/** Bucket start (ms) → counters, for the whole pipeline (null) and each configuration. */
type Grid = Map<string | null, Map<number, Counters>>;

function addTo(grid: Grid, configurationId: string | null, at: number, item: Record<string, unknown>) {
  let byAt = grid.get(configurationId);
  if (!byAt) {
    byAt = new Map();
    grid.set(configurationId, byAt);
  }
  let counters = byAt.get(at);
  if (!counters) {
    counters = new Map();
    byAt.set(at, counters);
  }
  mergeCounters(counters, item);
}

/** Every page of one Query (counted). */
async function queryAll(
  { db, tableName }: Table,
  input: { pk: string; from: string; to: string; filter?: string; projection?: string },
  stats: SeriesReadStats,
): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    stats.queries++;
    const answer = await db.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
        ExpressionAttributeValues: { ':pk': input.pk, ':from': input.from, ':to': input.to },
        ...(input.filter ? { FilterExpression: input.filter } : {}),
        ...(input.projection ? { ProjectionExpression: input.projection } : {}),
        ConsistentRead: true,
        ExclusiveStartKey: start,
      }),
    );
    const found = answer.Items ?? [];
    stats.itemsRead += found.length;
    items.push(...found);
    start = answer.LastEvaluatedKey;
  } while (start);
  return items;
}

/** A sort key's bucket start and configuration (null: the whole pipeline), or null for another item. */
function parseSortKey(sk: string): { at: string; configurationId: string | null; late: boolean } | null {
  const [at, tag, configurationId] = sk.split('#');
  if (at === undefined) return null;
  if (tag === 'A') return { at, configurationId: null, late: false };
  if (tag === 'C' && configurationId) return { at, configurationId, late: false };
  if (tag === 'L') return { at, configurationId: null, late: true };
  return null;
}

/**
 * The counters of every bucket of `grain` starting in [from, to): packs where they hold, shards
 * for the rest, and packs written for the periods read from the shards that have settled.
 */
async function readGrid(
  table: Table,
  pipelineId: string,
  grain: Grain,
  from: number,
  to: number,
  byConfiguration: boolean,
  now: number,
  retentionDays: number,
  stats: SeriesReadStats,
): Promise<Grid> {
  const grid: Grid = new Map();
  const size = PERIOD_MS[grain];
  const firstPeriod = periodStart(from, grain);
  const lastPeriod = periodStart(to - 1, grain);
  const iso = (ms: number) => new Date(ms).toISOString();
  // The periods not settled yet are read from the shards whatever their packs say: at once.
  const firstUnsettled = Math.max(firstPeriod, periodStart(now - SETTLE_MS, grain));
  const unsettled = firstUnsettled <= lastPeriod ? periodsFrom(firstUnsettled, lastPeriod, size) : [];
  const shardRead = readShards(table, pipelineId, grain, unsettled, stats);
  shardRead.catch(() => undefined);
  // The packs' keys and times only: a pack's buckets come from this environment's cache when it has them.
  const packs = await queryAll(
    table,
    {
      pk: seriesPackPartition(pipelineId, grain),
      from: iso(firstPeriod),
      to: `${iso(lastPeriod)}#~`,
      ...(byConfiguration ? {} : { filter: 'attribute_not_exists(configurationId)' }),
      projection: 'sk, packedAt, lateAt, configurationId',
    },
    stats,
  );
  const packed = new Map<number, { packedAt: number; items: Record<string, unknown>[] }>();
  const lateAt = new Map<number, number>();
  for (const item of packs) {
    const key = parseSortKey(String(item.sk));
    if (!key) continue;
    const period = Date.parse(key.at);
    if (key.late) {
      lateAt.set(period, Number(item.lateAt));
      continue;
    }
    const entry = packed.get(period) ?? { packedAt: 0, items: [] };
    if (key.configurationId === null) entry.packedAt = Number(item.packedAt);
    entry.items.push(item);
    packed.set(period, entry);
  }
  // Settled periods whose pack holds: made after every write into it had finished.
  const stale: number[] = [];
  const fresh: Record<string, unknown>[] = [];
  for (let period = firstPeriod; period < firstUnsettled && period <= lastPeriod; period += size) {
    const pack = packed.get(period);
    if (pack && pack.packedAt > 0 && pack.packedAt > (lateAt.get(period) ?? 0) + WRITE_MS)
      fresh.push(...pack.items);
    else stale.push(period);
  }
  const pk = seriesPackPartition(pipelineId, grain);
  for (const [item, buckets] of await packedBuckets(table, pk, fresh, stats)) {
    const configurationId = typeof item.configurationId === 'string' ? item.configurationId : null;
    for (const [at, counters] of Object.entries(buckets)) {
      const ms = Date.parse(at);
      if (ms >= from && ms < to) addTo(grid, configurationId, ms, counters);
    }
  }
  const fromShards = [...stale, ...unsettled];
  if (fromShards.length === 0) return grid;
  const readAt = now;
  const shardItems = [...(await readShards(table, pipelineId, grain, stale, stats)), ...(await shardRead)];
  const unpacked = new Set(fromShards);
  const toPack: Grid = new Map();
  for (const item of shardItems) {
    const key = parseSortKey(String(item.sk));
    if (!key || key.late) continue;
    const ms = Date.parse(key.at);
    if (!unpacked.has(periodStart(ms, grain))) continue;
    addTo(toPack, key.configurationId, ms, item);
    if ((byConfiguration || key.configurationId === null) && ms >= from && ms < to)
      addTo(grid, key.configurationId, ms, item);
  }
  await writePacks(table, pipelineId, grain, fromShards, toPack, { readAt, lateAt, retentionDays });
  return grid;
}

/** Packs the settled periods read from the shards (a period without records gets none). */
async function writePacks(
  { db, tableName }: Table,
  pipelineId: string,
  grain: Grain,
  periods: number[],
  counters: Grid,
  { readAt, lateAt, retentionDays }: { readAt: number; lateAt: Map<number, number>; retentionDays: number },
): Promise<void> {
  const settled = periods.filter(
    (period) =>
      readAt >= period + PERIOD_MS[grain] + SETTLE_MS && readAt > (lateAt.get(period) ?? 0) + WRITE_MS,
  );
  if (settled.length === 0) return;
  const pk = seriesPackPartition(pipelineId, grain);
  const byConfiguration: Record<string, unknown>[] = [];
  const whole: Record<string, unknown>[] = [];
  for (const period of settled) {
    // A period without a record gets no pack (an id no pipeline records under writes nothing); its
    // shards' Queries find nothing, cheaply.
    if (Object.keys(packOf(counters.get(null), period, grain)).length === 0) continue;
    const periodIso = new Date(period).toISOString();
    // A copy of the shards' counters: gone earlier than them (a shorter retention since), it is made again.
    const expiresAtEpoch = expiryEpoch(new Date(period + PERIOD_MS[grain]).toISOString(), retentionDays);
    for (const [configurationId, byAt] of counters) {
      const buckets = packOf(byAt, period, grain);
      if (configurationId !== null && Object.keys(buckets).length === 0) continue;
      const item = {
        pk,
        sk: configurationId === null ? `${periodIso}#A` : `${periodIso}#C#${configurationId}`,
        ...(configurationId === null ? {} : { configurationId }),
        b: JSON.stringify(buckets),
        packedAt: readAt,
        expiresAtEpoch,
      };
      keepPack(pk, item, buckets);
      (configurationId === null ? whole : byConfiguration).push(item);
    }
  }
  // The configurations' packs first: the whole pipeline's marks a period packed, so it goes last.
  if (await putAll(db, tableName, byConfiguration)) await putAll(db, tableName, whole);
}

/** Puts items in batches of 25, retrying what is left unprocessed; false if some never were. */
async function putAll(db: DynamoDBDocumentClient, tableName: string, items: Record<string, unknown>[]) {
  for (let i = 0; i < items.length; i += 25) {
    let unprocessed = items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } }));
    for (let attempt = 0; unprocessed.length > 0 && attempt < 5; attempt++) {
      const answer = await db.send(new BatchWriteCommand({ RequestItems: { [tableName]: unprocessed } }));
      unprocessed = (answer.UnprocessedItems?.[tableName] ?? []) as typeof unprocessed;
    }
    if (unprocessed.length > 0) return false;
  }
  return true;
}

/**
 * A pack's buckets, kept as one JSON string: DynamoDB's nested maps of 60 buckets cost a read
 * several times more to decode (measured on DynamoDB Local: a day of minutes 70–150 ms as maps).
 */
function unpack(stored: unknown): Record<string, Record<string, unknown>> {
  if (typeof stored !== 'string') return {};
  try {
    const parsed: unknown = JSON.parse(stored);
    return parsed !== null && typeof parsed === 'object'
      ? (parsed as Record<string, Record<string, unknown>>)
      : {};
  } catch {
    return {};
  }
}

/** A period's buckets as a pack's map: bucket start → counters. */
function packOf(byAt: Map<number, Counters> | undefined, period: number, grain: Grain) {
  const pack: Record<string, Record<string, number>> = {};
  for (const [at, counters] of byAt ?? []) {
    if (periodStart(at, grain) !== period) continue;
    pack[new Date(at).toISOString()] = Object.fromEntries(counters);
  }
  return pack;
}

/** The buckets of `step` over [from, to), from the grid of its grain (a day merges its hours). */
function bucketsOf(byAt: Map<number, Counters> | undefined, request: SeriesRead): Bucket[] {
  const size = STEP_MS[request.step];
  const buckets: Bucket[] = [];
  for (let at = request.from; at < request.to; at += size) {
    let counters: Counters | undefined;
    if (request.step === 'day') {
      counters = new Map();
      for (let hour = at; hour < at + size; hour += STEP_MS.hour) {
        for (const [name, value] of byAt?.get(hour) ?? [])
          counters.set(name, (counters.get(name) ?? 0) + value);
      }
    } else counters = byAt?.get(at);
    buckets.push(bucketOf(new Date(at).toISOString(), counters));
  }
  return buckets;
}

/** DynamoDB adapter of SeriesReads. */
export function makeSeriesReads(table: Table, clock: () => number = Date.now): SeriesReads {
  return {
    async read(request, stats = { queries: 0, itemsRead: 0 }) {
      const grain: Grain = request.step === 'minute' ? 'minute' : 'hour';
      const grid = await readGrid(
        table,
        request.pipelineId,
        grain,
        request.from,
        request.to,
        request.byConfiguration,
        clock(),
        request.retentionDays,
        stats,
      );
      const byConfiguration = new Map<string, Bucket[]>();
      if (request.byConfiguration) {
        for (const [configurationId, byAt] of grid) {
          if (configurationId !== null) byConfiguration.set(configurationId, bucketsOf(byAt, request));
        }
      }
      return { all: bucketsOf(grid.get(null), request), byConfiguration };
    },

    async window(pipelineId, from, to, retentionDays = RETENTION_DAYS.default) {
      const start = Math.floor(from / STEP_MS.minute) * STEP_MS.minute;
      const grid = await readGrid(table, pipelineId, 'minute', start, to, false, clock(), retentionDays, {
        queries: 0,
        itemsRead: 0,
      });
      const merged: Counters = new Map();
      for (const counters of grid.get(null)?.values() ?? []) {
        for (const [name, value] of counters) merged.set(name, (merged.get(name) ?? 0) + value);
      }
      return bucketOf(new Date(start).toISOString(), merged);
    },
  };
}
