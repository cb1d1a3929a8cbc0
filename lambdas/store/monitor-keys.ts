/*
 * The keys of monitors in the data table (store/monitors.ts), beside the pipeline's own items so
 * that its deletion removes them (store/removals.ts, prefix MONITOR):
 *   monitor        pk PIPELINE#<id>   sk MONITOR#<monitorId>
 *                  gsi2 MONITORS#<n> / <pipelineId>#<monitorId>   (every monitor, for the judge)
 *   monitor count  pk PIPELINE#<id>   sk MONITORCOUNT            (the per-pipeline cap)
 * The judge rewrites a monitor every minute, and gsi2 projects every attribute: the index is split
 * into MONITOR_INDEX_SHARDS partitions by the monitor's id (its record shard, stable for a
 * deployment), so no index partition is a hot key.
 */
import { type Index2Key, type ItemKey, pipelinePartition, recordShard } from './keys.ts';

/** Sort keys of a pipeline's monitor items (its monitors and their count). */
export const MONITOR_ITEMS_PREFIX = 'MONITOR';
export const MONITOR_PREFIX = 'MONITOR#';
export const MONITOR_INDEX_SHARDS = 8;

export const monitorKey = (pipelineId: string, monitorId: string): ItemKey => ({
  pk: pipelinePartition(pipelineId),
  sk: `${MONITOR_PREFIX}${monitorId}`,
});

export const monitorCountKey = (pipelineId: string): ItemKey => ({
  pk: pipelinePartition(pipelineId),
  sk: 'MONITORCOUNT',
});

export const monitorIndexPartition = (shard: number) => `MONITORS#${shard}`;

export const monitorIndexKey = (pipelineId: string, monitorId: string): Index2Key => ({
  gsi2pk: monitorIndexPartition(recordShard(monitorId) % MONITOR_INDEX_SHARDS),
  gsi2sk: `${pipelineId}#${monitorId}`,
});
