/*
 * A pipeline's series packs (store/series.ts reads them): an ended period's buckets merged from
 * the shards into one item, its index entry (a few bytes: what a read lists), and the packs an
 * environment has read, kept (a pack never changes once written; a newer one has another packedAt).
 */
import {
  BatchGetCommand,
  BatchWriteCommand,
  type DynamoDBDocumentClient,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { expiryEpoch } from '../core/lifecycle.ts';
import type { SeriesReadStats } from '../core/ports/series.ts';
import { type Counters, type Grain, mergeCounters } from '../core/series.ts';
import { seriesIndexPartition, seriesPackPartition } from './series-keys.ts';
import { PERIOD_MS, periodStart, WRITE_MS } from './series-writes.ts';

/** A period is packed once it ended this long ago: every write started in time is visible then. */
export const SETTLE_MS = 2 * WRITE_MS;

export interface Table {
  db: DynamoDBDocumentClient;
  tableName: string;
}

/** Bucket start (ms) → counters, for the whole pipeline (null) and each configuration. */
export type Grid = Map<string | null, Map<number, Counters>>;

/** A period's index entry: when it was packed (0: never), last written late, and its configurations' packs. */
export interface PackEntry {
  period: number;
  packedAt: number;
  lateAt: number;
  configurations: string[];
}

/** The index entry an item holds, or null for another item. */
export function entryOf(item: Record<string, unknown>): PackEntry | null {
  const sk = String(item.sk);
  if (!sk.endsWith('#A')) return null;
  const period = Date.parse(sk.slice(0, -2));
  if (!Number.isFinite(period)) return null;
  const configurations = item.configurations;
  return {
    period,
    packedAt: Number(item.packedAt ?? 0) || 0,
    lateAt: Number(item.lateAt ?? 0) || 0,
    configurations:
      configurations instanceof Set ? [...configurations].filter((id) => typeof id === 'string') : [],
  };
}

/** One pack to read: its sort key, the time its index entry gives, and its configuration (null: the whole). */
export interface PackKey {
  period: number;
  sk: string;
  packedAt: number;
  configurationId: string | null;
}

/** The packs of an index entry: the whole pipeline's, and each configuration's when asked. */
export function packKeysOf(entry: PackEntry, byConfiguration: boolean): PackKey[] {
  const at = new Date(entry.period).toISOString();
  const whole = { period: entry.period, sk: `${at}#A`, packedAt: entry.packedAt, configurationId: null };
  if (!byConfiguration) return [whole];
  return [
    whole,
    ...entry.configurations.map((configurationId) => ({
      period: entry.period,
      sk: `${at}#C#${configurationId}`,
      packedAt: entry.packedAt,
      configurationId,
    })),
  ];
}

/** A pack's buckets: bucket start (ms) → counters. Shared by every read of the environment: never changed. */
export type PackBuckets = ReadonlyMap<number, Counters>;

/** The counters of the packs kept: a read that would add to one copies it first (store/series.ts). */
const sharedCounters = new WeakSet<Counters>();
export const isShared = (counters: Counters) => sharedCounters.has(counters);

function packBucketsOf(buckets: Record<string, Record<string, unknown>>): PackBuckets {
  const byAt = new Map<number, Counters>();
  for (const [at, item] of Object.entries(buckets)) {
    const ms = Date.parse(at);
    if (!Number.isFinite(ms) || item === null || typeof item !== 'object') continue;
    const counters: Counters = new Map();
    mergeCounters(counters, item);
    sharedCounters.add(counters);
    byAt.set(ms, counters);
  }
  return byAt;
}

/**
 * Packs' buckets by pack (its key and time packed): a pack never changes once written (a newer one
 * has another packedAt), so an environment keeps the ones it read, up to PACKS_KEPT.
 */
const packCache = new Map<string, PackBuckets>();
const PACKS_KEPT = 2_000;
const cacheKeyOf = (pk: string, sk: string, packedAt: unknown) => `${pk}|${sk}|${String(packedAt)}`;

function keepPack(pk: string, sk: string, packedAt: unknown, buckets: PackBuckets) {
  if (packCache.size >= PACKS_KEPT) packCache.delete(packCache.keys().next().value as string);
  packCache.set(cacheKeyOf(pk, sk, packedAt), buckets);
}

/**
 * The buckets of each pack: from this environment's cache, else one BatchGet a hundred; null for a
 * pack its index names that is gone (expired before its entry: the period is read afresh).
 */
export async function packedBuckets(
  { db, tableName }: Table,
  pk: string,
  packs: PackKey[],
  stats: SeriesReadStats,
): Promise<Array<[PackKey, PackBuckets | null]>> {
  const cacheKey = (pack: PackKey) => cacheKeyOf(pk, pack.sk, pack.packedAt);
  // What this read fetched, by sort key: a pack packed again since the index was read is as good.
  const fetched = new Map<string, PackBuckets>();
  const missing = packs.filter((pack) => !packCache.has(cacheKey(pack)));
  for (let i = 0; i < missing.length; i += 100) {
    let keys = missing.slice(i, i + 100).map((pack) => ({ pk, sk: pack.sk }));
    for (let attempt = 0; keys.length > 0 && attempt < 5; attempt++) {
      stats.queries++;
      const answer = await db.send(
        new BatchGetCommand({
          RequestItems: {
            [tableName]: { Keys: keys, ProjectionExpression: 'sk, packedAt, b', ConsistentRead: true },
          },
          ReturnConsumedCapacity: 'TOTAL',
        }),
      );
      countUnits(stats, answer.ConsumedCapacity);
      for (const item of answer.Responses?.[tableName] ?? []) {
        stats.itemsRead++;
        const buckets = packBucketsOf(unpack(item.b));
        fetched.set(String(item.sk), buckets);
        keepPack(pk, String(item.sk), item.packedAt, buckets);
      }
      keys = (answer.UnprocessedKeys?.[tableName]?.Keys ?? []) as typeof keys;
    }
  }
  return packs.map((pack) => {
    const kept = packCache.get(cacheKey(pack));
    if (kept) return [pack, kept];
    // Packed again since the index was read (two reads packing at once): as good, and kept under
    // the time the index gives, so the next read finds it.
    const buckets = fetched.get(pack.sk) ?? null;
    if (buckets) keepPack(pk, pack.sk, pack.packedAt, buckets);
    return [pack, buckets];
  });
}

/** Adds the read units a request consumed to the read's stats. */
export function countUnits(
  stats: SeriesReadStats,
  consumed:
    | { CapacityUnits?: number | undefined }
    | Array<{ CapacityUnits?: number | undefined }>
    | undefined,
) {
  for (const entry of Array.isArray(consumed) ? consumed : consumed ? [consumed] : []) {
    stats.readUnits = (stats.readUnits ?? 0) + (entry.CapacityUnits ?? 0);
  }
}

/** Packs the settled periods read from the shards (a period without records gets none). */
export async function writePacks(
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
  const bodies: Record<string, unknown>[] = [];
  const entries: Array<{ period: number; configurations: string[]; expiresAtEpoch: number }> = [];
  for (const period of settled) {
    // A period without a record gets no pack (an id no pipeline records under writes nothing); its
    // shards' Queries find nothing, cheaply.
    const whole = packOf(counters.get(null), period, grain);
    if (Object.keys(whole).length === 0) continue;
    const periodIso = new Date(period).toISOString();
    // A copy of the shards' counters: gone earlier than them (a shorter retention since), it is made again.
    const expiresAtEpoch = expiryEpoch(new Date(period + PERIOD_MS[grain]).toISOString(), retentionDays);
    const configurations: string[] = [];
    for (const [configurationId, byAt] of counters) {
      const buckets = configurationId === null ? whole : packOf(byAt, period, grain);
      if (configurationId !== null) {
        if (Object.keys(buckets).length === 0) continue;
        configurations.push(configurationId);
      }
      const sk = configurationId === null ? `${periodIso}#A` : `${periodIso}#C#${configurationId}`;
      keepPack(pk, sk, readAt, packBucketsOf(buckets));
      bodies.push({ pk, sk, b: JSON.stringify(buckets), packedAt: readAt, expiresAtEpoch });
    }
    entries.push({ period, configurations, expiresAtEpoch });
  }
  // The packs, then their index entries (a pack no entry names yet is never read; one rewritten is
  // the same). An update, not a put: a late mark set since the shards were read stays, and makes
  // this pack stale.
  if (!(await putAll(db, tableName, bodies))) return;
  const index = seriesIndexPartition(pipelineId, grain);
  for (let i = 0; i < entries.length; i += ENTRY_UPDATES_AT_ONCE) {
    await Promise.all(
      entries.slice(i, i + ENTRY_UPDATES_AT_ONCE).map(({ period, configurations, expiresAtEpoch }) =>
        db.send(
          new UpdateCommand({
            TableName: tableName,
            Key: { pk: index, sk: `${new Date(period).toISOString()}#A` },
            UpdateExpression:
              configurations.length > 0
                ? 'SET packedAt = :p, expiresAtEpoch = :e, configurations = :c'
                : 'SET packedAt = :p, expiresAtEpoch = :e REMOVE configurations',
            ExpressionAttributeValues: {
              ':p': readAt,
              ':e': expiresAtEpoch,
              ...(configurations.length > 0 ? { ':c': new Set(configurations) } : {}),
            },
          }),
        ),
      ),
    );
  }
}

/** Index entries updated at once by a read that packs (the first read of a day packs 24). */
const ENTRY_UPDATES_AT_ONCE = 8;

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
