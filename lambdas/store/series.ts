/*
 * A pipeline's series in the data table (keys: store/keys.ts seriesPartition, seriesPackPartition).
 *
 * Written with the recording: each transaction of records adds its records' counters (core/series.ts)
 * to the buckets of one shard of SERIES_SHARDS (the batch's), so no key takes more than an eighth
 * of a pipeline's batches, and a batch stored once is counted once.
 *
 * Read by period (an hour of minutes, a day of hours): a period that ended a while ago is read from
 * its pack, one item merged from the shards by the first read after it ended and kept; the recent
 * periods (and one a late record changed since its pack) are read from the shards. A day of minutes
 * is then one Query of the packs and one of each shard, whatever the traffic.
 */
import { BatchWriteCommand, type DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { expiryEpoch, RETENTION_DAYS } from '../core/lifecycle.ts';
import type { SeriesRead, SeriesReadStats, SeriesReads } from '../core/ports/series.ts';
import type { Execution, Signal } from '../core/schemas/records.ts';
import {
  type Bucket,
  bucketOf,
  type Counters,
  executionDeltas,
  type Grain,
  mergeCounters,
  STEP_MS,
  type SeriesDelta,
  signalDeltas,
} from '../core/series.ts';
import { SERIES_SHARDS, seriesPackPartition, seriesPartition } from './keys.ts';

/** A period: the span one pack holds (an hour of minute buckets, a day of hour buckets). */
export const PERIOD_MS: Record<Grain, number> = { minute: 3_600_000, hour: 86_400_000 };

/**
 * The longest a recording's transaction may take from its start (the recording functions time out
 * well before): a write that started before its period's end plus this is seen by any read made
 * SETTLE_MS after the end.
 */
const WRITE_MS = 60_000;

/** A period is packed once it ended this long ago: every write started in time is visible then. */
export const SETTLE_MS = 2 * WRITE_MS;

const periodStart = (at: number, grain: Grain) => Math.floor(at / PERIOD_MS[grain]) * PERIOD_MS[grain];

const shardOf = (id: string) => {
  let hash = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) hash = Math.imul(hash ^ id.charCodeAt(i), 0x01000193) >>> 0;
  return hash % SERIES_SHARDS;
};

const sortKey = (at: string, configurationId: string | null) =>
  configurationId === null ? `${at}#A` : `${at}#C#${configurationId}`;

type Update = Record<string, unknown>;

function deltaUpdate(
  tableName: string,
  pipelineId: string,
  shard: number,
  delta: SeriesDelta,
  retentionDays: number,
): Update {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const adds: string[] = [];
  let i = 0;
  for (const [name, by] of delta.adds) {
    names[`#a${i}`] = name;
    values[`:a${i}`] = by;
    adds.push(`#a${i} :a${i}`);
    i++;
  }
  const end = new Date(Date.parse(delta.at) + STEP_MS[delta.grain]).toISOString();
  values[':e'] = expiryEpoch(end, retentionDays);
  return {
    Update: {
      TableName: tableName,
      Key: { pk: seriesPartition(pipelineId, delta.grain, shard), sk: sortKey(delta.at, delta.configurationId) },
      UpdateExpression: `ADD ${adds.join(', ')} SET expiresAtEpoch = :e`,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    },
  };
}

/**
 * A period written into after it may have been packed: its late mark says when, and a pack made
 * before that mark (plus WRITE_MS) is stale.
 */
function lateMark(tableName: string, pipelineId: string, grain: Grain, period: number, now: number, retentionDays: number): Update {
  const end = new Date(period + PERIOD_MS[grain]).toISOString();
  return {
    Update: {
      TableName: tableName,
      Key: { pk: seriesPackPartition(pipelineId, grain), sk: `${new Date(period).toISOString()}#L` },
      UpdateExpression: 'SET lateAt = :now, expiresAtEpoch = :e',
      ExpressionAttributeValues: { ':now': now, ':e': expiryEpoch(end, retentionDays) },
    },
  };
}

/** What a part of a batch (stored records, one transaction) adds to the series: its updates. */
export type SeriesUpdates = (part: ReadonlyArray<Record<string, unknown>>) => Update[];

/**
 * The series' updates of a transaction of records: the buckets' counters in the part's shard, and
 * a late mark for each period that ended more than WRITE_MS before `now` (a pack may exist).
 */
export function seriesUpdates(
  tableName: string,
  kind: 'execution' | 'signal',
  retentionDays: number,
  now: number,
): SeriesUpdates {
  return (part) => {
    const first = part[0];
    if (!first) return [];
    const pipelineId = String(first.pipelineId);
    const shard = shardOf(String(first.id));
    const deltas =
      kind === 'execution'
        ? executionDeltas(part as unknown as Execution[])
        : signalDeltas(part as unknown as Signal[]);
    const at = now;
    const late = new Map<string, Update>();
    for (const delta of deltas) {
      const period = periodStart(Date.parse(delta.at), delta.grain);
      if (at < period + PERIOD_MS[delta.grain] + WRITE_MS) continue;
      const key = `${delta.grain}|${period}`;
      if (!late.has(key)) late.set(key, lateMark(tableName, pipelineId, delta.grain, period, at, retentionDays));
    }
    return [...deltas.map((delta) => deltaUpdate(tableName, pipelineId, shard, delta, retentionDays)), ...late.values()];
  };
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
  input: { pk: string; from: string; to: string; filter?: string },
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
  const firstPeriod = periodStart(from, grain);
  const lastPeriod = periodStart(to - 1, grain);
  const iso = (ms: number) => new Date(ms).toISOString();
  const packs = await queryAll(
    table,
    {
      pk: seriesPackPartition(pipelineId, grain),
      from: iso(firstPeriod),
      to: `${iso(lastPeriod)}#~`,
      ...(byConfiguration ? {} : { filter: 'attribute_not_exists(configurationId)' }),
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
  // Periods whose pack holds: made after every write into it had finished.
  const fromShards: number[] = [];
  for (let period = firstPeriod; period <= lastPeriod; period += PERIOD_MS[grain]) {
    const pack = packed.get(period);
    const fresh = pack && pack.packedAt > 0 && pack.packedAt > (lateAt.get(period) ?? 0) + WRITE_MS;
    if (fresh) {
      for (const item of pack.items) {
        const configurationId = typeof item.configurationId === 'string' ? item.configurationId : null;
        const buckets = (item.b ?? {}) as Record<string, Record<string, unknown>>;
        for (const [at, counters] of Object.entries(buckets)) {
          const ms = Date.parse(at);
          if (ms >= from && ms < to) addTo(grid, configurationId, ms, counters);
        }
      }
    } else fromShards.push(period);
  }
  const [oldest, newest] = [fromShards[0], fromShards.at(-1)];
  if (oldest === undefined || newest === undefined) return grid;
  // One Query a shard over the periods not packed (the recent ones, and any a late record changed).
  const readAt = now;
  const shardItems = (
    await Promise.all(
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
    )
  ).flat();
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

/** Packs the settled periods read from the shards (an empty period gets an empty pack). */
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
  const items: Record<string, unknown>[] = [];
  for (const period of settled) {
    const periodIso = new Date(period).toISOString();
    // A copy of the shards' counters: gone earlier than them (a shorter retention since), it is made again.
    const expiresAtEpoch = expiryEpoch(new Date(period + PERIOD_MS[grain]).toISOString(), retentionDays);
    const configurations = [...counters.keys()].filter((id): id is string => id !== null);
    for (const configurationId of configurations) {
      items.push({
        pk: seriesPackPartition(pipelineId, grain),
        sk: `${periodIso}#C#${configurationId}`,
        configurationId,
        b: packOf(counters.get(configurationId), period, grain),
        packedAt: readAt,
        expiresAtEpoch,
      });
    }
    // The whole pipeline's pack last: it marks the period packed.
    items.push({
      pk: seriesPackPartition(pipelineId, grain),
      sk: `${periodIso}#A`,
      b: packOf(counters.get(null), period, grain),
      packedAt: readAt,
      expiresAtEpoch,
    });
  }
  for (let i = 0; i < items.length; i += 25) {
    const batch = items.slice(i, i + 25);
    let unprocessed = batch.map((Item) => ({ PutRequest: { Item } }));
    for (let attempt = 0; unprocessed.length > 0 && attempt < 5; attempt++) {
      const answer = await db.send(new BatchWriteCommand({ RequestItems: { [tableName]: unprocessed } }));
      unprocessed = (answer.UnprocessedItems?.[tableName] ?? []) as typeof unprocessed;
    }
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
        for (const [name, value] of byAt?.get(hour) ?? []) counters.set(name, (counters.get(name) ?? 0) + value);
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
