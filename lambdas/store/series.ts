/*
 * A pipeline's series in the data table (keys: store/series-keys.ts).
 *
 * Written with the recording (store/series-writes.ts): each transaction of records adds its
 * records' counters (core/series.ts) to its shard's item of each bucket (one of SERIES_SHARDS, the
 * batch's), so that concurrent batches seldom write the same item, and a batch stored once is
 * counted once.
 *
 * Read by period (an hour of minutes, a day of hours): a period that ended a while ago is read from
 * its pack, one item merged from the shards' items by the first read after it ended and kept; the
 * recent periods (and one a late record changed since its pack) are read from the counters. A day
 * of minutes is then one Query of the packs' index and one of the counters, whatever the traffic
 * (and a BatchGet of the packs this environment has not read yet).
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { RETENTION_DAYS } from '../core/lifecycle.ts';
import type { SeriesRead, SeriesReadStats, SeriesReads } from '../core/ports/series.ts';
import {
  addCounters,
  type Bucket,
  bucketOf,
  type Counters,
  type Grain,
  mergeCounters,
  STEP_MS,
} from '../core/series.ts';
import {
  LEGACY_SHARDS,
  legacySeriesPartition,
  seriesIndexPartition,
  seriesPackPartition,
  seriesPartition,
} from './series-keys.ts';
import {
  countUnits,
  entryOf,
  type Grid,
  isShared,
  type PackEntry,
  type PackKey,
  packedBuckets,
  packKeysOf,
  SETTLE_MS,
  type Table,
  writePacks,
} from './series-packs.ts';
import { PERIOD_MS, periodStart, WRITE_MS } from './series-writes.ts';

const periodsFrom = (first: number, last: number, size: number) =>
  Array.from({ length: Math.floor((last - first) / size) + 1 }, (_, i) => first + i * size);

/**
 * The counters' items over the span of `periods` (none for no period): one Query of the grain's
 * partition, and with `legacy` one of each shard's partition of the layout before (a period being
 * packed may hold items written before it).
 */
async function readShards(
  table: Table,
  pipelineId: string,
  grain: Grain,
  periods: number[],
  stats: SeriesReadStats,
  { legacy }: { legacy: boolean },
): Promise<Record<string, unknown>[]> {
  const [oldest, newest] = [periods[0], periods.at(-1)];
  if (oldest === undefined || newest === undefined) return [];
  const iso = (ms: number) => new Date(ms).toISOString();
  const partitions = [
    seriesPartition(pipelineId, grain),
    ...(legacy ? LEGACY_SHARDS.map((shard) => legacySeriesPartition(pipelineId, grain, shard)) : []),
  ];
  const read = await Promise.all(
    partitions.map((pk) =>
      queryAll(table, { pk, from: iso(oldest), to: `${iso(newest + PERIOD_MS[grain] - 1)}#~` }, stats),
    ),
  );
  return read.flat();
}

/* ---- reading ---- */

/** The counters of a bucket to add to: its own (a pack's kept counters are copied first). */
function countersAt(grid: Grid, configurationId: string | null, at: number): Counters {
  let byAt = grid.get(configurationId);
  if (!byAt) {
    byAt = new Map();
    grid.set(configurationId, byAt);
  }
  let counters = byAt.get(at);
  if (!counters || isShared(counters)) {
    counters = new Map(counters ?? []);
    byAt.set(at, counters);
  }
  return counters;
}

/** A pack's bucket into the grid: its kept counters themselves where the bucket has none yet. */
function shareInto(grid: Grid, configurationId: string | null, at: number, counters: Counters) {
  const byAt = grid.get(configurationId);
  if (!byAt) grid.set(configurationId, new Map([[at, counters]]));
  else if (!byAt.has(at)) byAt.set(at, counters);
  else addCounters(countersAt(grid, configurationId, at), counters);
}

/**
 * A counters' item into the grid: a configuration's (with `byConfiguration`) and the whole
 * pipeline's. The whole pipeline's executions are its configurations' added up (the recording
 * counts an execution on its configuration's item only); its own item holds the signals, and,
 * written before, a copy of the executions, left out.
 */
function addTo(
  grid: Grid,
  configurationId: string | null,
  at: number,
  item: Record<string, unknown>,
  byConfiguration: boolean,
) {
  if (configurationId === null) {
    mergeCounters(countersAt(grid, null, at), item, 'signals');
    return;
  }
  mergeCounters(countersAt(grid, null, at), item, 'executions');
  if (byConfiguration) mergeCounters(countersAt(grid, configurationId, at), item);
}

/** Every page of one Query (counted). */
async function queryAll(
  { db, tableName }: Table,
  input: { pk: string; from: string; to: string },
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
        ConsistentRead: true,
        ExclusiveStartKey: start,
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );
    countUnits(stats, answer.ConsumedCapacity);
    const found = answer.Items ?? [];
    stats.itemsRead += found.length;
    items.push(...found);
    start = answer.LastEvaluatedKey;
  } while (start);
  return items;
}

/** A sort key's bucket start and configuration (null: the whole pipeline), or null for another item. */
function parseSortKey(sk: string): { at: string; configurationId: string | null } | null {
  const [at, tag, configurationId] = sk.split('#');
  if (at === undefined) return null;
  if (tag === 'A') return { at, configurationId: null };
  if (tag === 'C' && configurationId) return { at, configurationId };
  return null;
}

/**
 * The packs' buckets in [from, to) into the grid; the periods one of whose packs is gone (a pack
 * expires with the default window, its index entry in any order after it), to be read from their
 * counters and packed again, not answered as zeros.
 */
async function addPacks(
  table: Table,
  pk: string,
  fresh: PackKey[],
  { grid, from, to }: { grid: Grid; from: number; to: number },
  stats: SeriesReadStats,
): Promise<number[]> {
  const packed = await packedBuckets(table, pk, fresh, stats);
  const gone = new Set(packed.flatMap(([pack, buckets]) => (buckets ? [] : [pack.period])));
  for (const [pack, buckets] of packed) {
    if (!buckets || gone.has(pack.period)) continue;
    for (const [ms, counters] of buckets) {
      if (ms >= from && ms < to) shareInto(grid, pack.configurationId, ms, counters);
    }
  }
  return [...gone];
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
  // By the hour, the day not settled yet is its minutes added up: their packs (the hours that
  // ended) and the minute shards of the last hour, not every hour of the day in every hour shard.
  const recent =
    grain === 'hour' && unsettled.length > 0
      ? readGrid(
          table,
          pipelineId,
          'minute',
          Math.max(from, firstUnsettled),
          to,
          byConfiguration,
          now,
          retentionDays,
          stats,
        )
      : null;
  // The periods not settled yet in this layout only: written by this version since (a period that
  // began before it counts its earlier items once packed).
  const shardRead = recent
    ? Promise.resolve([])
    : readShards(table, pipelineId, grain, unsettled, stats, { legacy: false });
  shardRead.catch(() => undefined);
  recent?.catch(() => undefined);
  // Each period's index entry (when it was packed, written late, its configurations): a pack's
  // buckets come from this environment's cache when it has them.
  const entries = new Map<number, PackEntry>();
  for (const item of await queryAll(
    table,
    { pk: seriesIndexPartition(pipelineId, grain), from: iso(firstPeriod), to: `${iso(lastPeriod)}#~` },
    stats,
  )) {
    const entry = entryOf(item);
    if (entry) entries.set(entry.period, entry);
  }
  const lateAt = new Map([...entries].map(([period, entry]) => [period, entry.lateAt]));
  // Settled periods whose pack holds: made after every write into it had finished.
  const stale: number[] = [];
  const fresh: PackKey[] = [];
  for (let period = firstPeriod; period < firstUnsettled && period <= lastPeriod; period += size) {
    const entry = entries.get(period);
    if (entry && entry.packedAt > 0 && entry.packedAt > entry.lateAt + WRITE_MS)
      fresh.push(...packKeysOf(entry, byConfiguration));
    else stale.push(period);
  }
  const pk = seriesPackPartition(pipelineId, grain);
  // A period one of whose packs is gone is read from its counters and packed again.
  stale.push(...(await addPacks(table, pk, fresh, { grid, from, to }, stats)));
  stale.sort((a, b) => a - b);
  if (recent) {
    for (const [configurationId, byMinute] of await recent) {
      for (const [minute, counters] of byMinute) {
        addCounters(
          countersAt(grid, configurationId, Math.floor(minute / STEP_MS.hour) * STEP_MS.hour),
          counters,
        );
      }
    }
  }
  const fromShards = recent ? stale : [...stale, ...unsettled];
  if (fromShards.length === 0) return grid;
  const readAt = now;
  const shardItems = [
    ...(await readShards(table, pipelineId, grain, stale, stats, { legacy: true })),
    ...(await shardRead),
  ];
  const unpacked = new Set(fromShards);
  const toPack: Grid = new Map();
  for (const item of shardItems) {
    const key = parseSortKey(String(item.sk));
    if (!key) continue;
    const ms = Date.parse(key.at);
    if (!unpacked.has(periodStart(ms, grain))) continue;
    addTo(toPack, key.configurationId, ms, item, true);
    if (ms >= from && ms < to) addTo(grid, key.configurationId, ms, item, byConfiguration);
  }
  await writePacks(table, pipelineId, grain, fromShards, toPack, { readAt, lateAt, retentionDays });
  return grid;
}

/** The buckets of `step` over [from, to), from the grid of its grain (a day merges its hours). */
function bucketsOf(byAt: Map<number, Counters> | undefined, request: SeriesRead): Bucket[] {
  const size = STEP_MS[request.step];
  const buckets: Bucket[] = [];
  for (let at = request.from; at < request.to; at += size) {
    let counters: Counters | undefined;
    if (request.step === 'day') {
      counters = new Map();
      for (let hour = at; hour < at + size; hour += STEP_MS.hour)
        addCounters(counters, byAt?.get(hour) ?? []);
    } else counters = byAt?.get(at);
    buckets.push(counters && isShared(counters) ? keptBucket(at, counters) : bucketOf(isoOf(at), counters));
  }
  return buckets;
}

/** The answer's bucket of a pack's kept counters, built once: they never change, nor does it. */
const keptBuckets = new WeakMap<Counters, Bucket>();
function keptBucket(at: number, counters: Counters): Bucket {
  let bucket = keptBuckets.get(counters);
  if (!bucket) {
    bucket = bucketOf(isoOf(at), counters);
    // Shared by every answer of the environment: frozen, so that nothing changes one for all.
    for (const part of [bucket.durationMs, bucket.tokens, bucket.signals, bucket.scores, bucket])
      Object.freeze(part);
    for (const score of Object.values(bucket.scores)) Object.freeze(score);
    keptBuckets.set(counters, bucket);
  }
  return bucket;
}

/**
 * A bucket start as an ISO time: a minute's from its hour's (one Date an hour, not 1,440 a day of
 * minutes), the same text `new Date(at).toISOString()` gives.
 */
function isoOf(at: number): string {
  const minute = (at % STEP_MS.hour) / STEP_MS.minute;
  if (!(at > 0) || !Number.isInteger(minute) || minute === 0) return new Date(at).toISOString();
  const hour = at - minute * STEP_MS.minute;
  if (hour !== lastHour) {
    lastHour = hour;
    lastHourIso = new Date(hour).toISOString();
  }
  return `${lastHourIso.slice(0, 14)}${minute < 10 ? '0' : ''}${minute}:00.000Z`;
}
let lastHour = Number.NaN;
let lastHourIso = '';

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
      for (const counters of grid.get(null)?.values() ?? []) addCounters(merged, counters);
      return bucketOf(new Date(start).toISOString(), merged);
    },
  };
}
