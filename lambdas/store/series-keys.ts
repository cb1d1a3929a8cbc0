/* The keys of a pipeline's series (store/series.ts), beside the records' (store/keys.ts). */
import { pipelinePartition } from './keys.ts';

/**
 * A pipeline's series (store/series.ts): counters by the minute and the hour, added with the
 * recording into one of SERIES_SHARDS partitions a grain (the batch's), and packs of finished
 * periods (an hour of minutes, a day of hours) merged from the shards by the first read after.
 *   series   pk PIPELINE#<id>#SERIES#M|H#<nn>  sk <bucket start>#A | <bucket start>#C#<configurationId>
 *   packs    pk PIPELINE#<id>#SERIES#PM|PH     sk <period start>#A | …#C#<configurationId>   (b: the buckets)
 *   index    pk PIPELINE#<id>#SERIES#IM|IH     sk <period start>#A  (packedAt, lateAt, configurations)
 * A read lists a range's periods from the index, one item of a few bytes each: DynamoDB counts a
 * Query's read units (and DynamoDB Local its time) by the items' whole size, whatever the
 * projection, and a pack of 60 buckets is several kilobytes.
 */
export const SERIES_SHARDS = 4;

export const seriesPartition = (pipelineId: string, grain: 'minute' | 'hour', shard: number) =>
  `${pipelinePartition(pipelineId)}#SERIES#${grain === 'minute' ? 'M' : 'H'}#${String(shard).padStart(2, '0')}`;

export const seriesPackPartition = (pipelineId: string, grain: 'minute' | 'hour') =>
  `${pipelinePartition(pipelineId)}#SERIES#P${grain === 'minute' ? 'M' : 'H'}`;

export const seriesIndexPartition = (pipelineId: string, grain: 'minute' | 'hour') =>
  `${pipelinePartition(pipelineId)}#SERIES#I${grain === 'minute' ? 'M' : 'H'}`;

/** Every partition of a pipeline's series: each grain's shards, packs and index (its deletion removes them all). */
export const SERIES_PARTITIONS: ReadonlyArray<(pipelineId: string) => string> = /* @__PURE__ */ (
  ['minute', 'hour'] as const
).flatMap((grain) => [
  ...Array.from(
    { length: SERIES_SHARDS },
    (_, shard) => (pipelineId: string) => seriesPartition(pipelineId, grain, shard),
  ),
  (pipelineId: string) => seriesPackPartition(pipelineId, grain),
  (pipelineId: string) => seriesIndexPartition(pipelineId, grain),
]);
