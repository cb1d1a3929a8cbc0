/*
 * What a transaction of records adds to its pipeline's series (store/series.ts reads them): the
 * buckets' counters (core/series.ts) in the shard of the part's first record, and a late mark for
 * a period written into after a read may have packed it.
 */
import { expiryEpoch } from '../core/lifecycle.ts';
import type { Execution, Signal } from '../core/schemas/records.ts';
import { executionDeltas, type Grain, type SeriesDelta, STEP_MS, signalDeltas } from '../core/series.ts';
import { SERIES_SHARDS, seriesIndexPartition, seriesPartition } from './series-keys.ts';

/** A period: the span one pack holds (an hour of minute buckets, a day of hour buckets). */
export const PERIOD_MS: Record<Grain, number> = { minute: 3_600_000, hour: 86_400_000 };

/**
 * The longest a recording's transaction may take from its start (the recording functions time out
 * well before): a write that started before its period's end plus this is seen by any read made
 * SETTLE_MS after the end.
 */
export const WRITE_MS = 60_000;

export const periodStart = (at: number, grain: Grain) => Math.floor(at / PERIOD_MS[grain]) * PERIOD_MS[grain];

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
      Key: {
        pk: seriesPartition(pipelineId, delta.grain),
        sk: `${sortKey(delta.at, delta.configurationId)}#${shard}`,
      },
      UpdateExpression: `ADD ${adds.join(', ')} SET expiresAtEpoch = :e`,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    },
  };
}

/**
 * A period written into after it may have been packed: its late mark (on its index entry) says
 * when, and a pack made before that mark (plus WRITE_MS) is stale.
 */
function lateMark(
  tableName: string,
  pipelineId: string,
  grain: Grain,
  period: number,
  now: number,
  retentionDays: number,
): Update {
  const end = new Date(period + PERIOD_MS[grain]).toISOString();
  return {
    Update: {
      TableName: tableName,
      Key: { pk: seriesIndexPartition(pipelineId, grain), sk: `${new Date(period).toISOString()}#A` },
      UpdateExpression: 'SET lateAt = :now, expiresAtEpoch = :e',
      ExpressionAttributeValues: { ':now': now, ':e': expiryEpoch(end, retentionDays) },
    },
  };
}

/**
 * Whether the recording keeps the series: always, but for the bench's baseline (recording as it
 * was before the series, in the same run; bench/series.ts).
 */
export const SERIES_RECORDING = { on: true };

/**
 * What a part of a batch (stored records, one transaction) adds to the series: its updates, in
 * `shard` (seriesShard: a batch's parts, written at once, each take the next one, never sharing).
 */
export type SeriesUpdates = (part: ReadonlyArray<Record<string, unknown>>, shard: number) => Update[];

/** The series shard of a batch's `index`-th part: after its first record's (FNV-1a of the id). */
export function seriesShard(firstId: string, index: number): number {
  return (shardOf(firstId) + index) % SERIES_SHARDS;
}

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
  return (part, shard) => {
    const first = part[0];
    if (!first || !SERIES_RECORDING.on) return [];
    const pipelineId = String(first.pipelineId);
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
      if (!late.has(key))
        late.set(key, lateMark(tableName, pipelineId, delta.grain, period, at, retentionDays));
    }
    return [
      ...deltas.map((delta) => deltaUpdate(tableName, pipelineId, shard, delta, retentionDays)),
      ...late.values(),
    ];
  };
}
